import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEMPORAL_SERVER_VERSION } from '../../src/devserver/temporal-release';
import { SESSION_SEARCH_ATTRIBUTES } from '../../src/session';

const root = join(__dirname, '..', '..');

/** Why `docker compose` cannot run here, or `undefined` when it can (no engine is needed for `config`). */
function composeUnavailable(): string | undefined {
  const docker = spawnSync('docker', ['--version'], { encoding: 'utf8' });
  if (docker.error) return 'no docker command on this machine';
  const compose = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
  if (compose.status !== 0) return 'the docker compose plugin is not installed';
  return undefined;
}

const skip = composeUnavailable();
/** The secrets the stack requires from the environment. */
const SECRETS = { POSTGRES_PASSWORD: 'test-only', AGENT_SESSIONS_TOKEN: 'test-token', STREAM_STORE_PASSWORD: 'streamonly' };

function compose(args: string[], vars: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Only what the test passes may shape the result, not the caller's shell.
  for (const name of ['POSTGRES_PASSWORD', 'STREAM_STORE_PASSWORD', 'POSTGRES_USER', 'ALLOW_PARALLEL_IN_PROGRESS', 'TEMPORAL_NAMESPACE', 'AGENT_SESSIONS_TOKEN', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'AGENT_SESSIONS_TRACE_URL']) delete env[name];
  const result = spawnSync('docker', ['compose', '--project-directory', root, '-f', join(root, 'docker-compose.yml'), ...args], {
    cwd: root,
    env: { ...env, ...vars },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

interface ComposeService {
  image?: string;
  container_name?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: Array<{ host_ip?: string; published?: string; target?: number }>;
  depends_on?: Record<string, { condition: string }>;
  build?: unknown;
  volumes?: Array<{ type: string; source: string; target: string; read_only?: boolean }>;
  secrets?: Array<{ source: string; target: string }>;
}

function services(vars: Record<string, string>): Record<string, ComposeService> {
  const result = compose(['config', '--format', 'json'], vars);
  assert.equal(result.status, 0, result.stderr);
  return (JSON.parse(result.stdout) as { services: Record<string, ComposeService> }).services;
}

test('the compose file is valid once its secrets are set', { skip }, () => {
  const result = compose(['config', '--quiet'], SECRETS);
  assert.equal(result.status, 0, result.stderr);
});

test('the compose file refuses to run without a PostgreSQL password and says which variable', { skip }, () => {
  const result = compose(['config', '--quiet'], { AGENT_SESSIONS_TOKEN: 'test-token', STREAM_STORE_PASSWORD: SECRETS.STREAM_STORE_PASSWORD });
  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /POSTGRES_PASSWORD/);
});

test("the compose file refuses to run without the stream store's password and says which variable", { skip }, () => {
  const result = compose(['config', '--quiet'], { AGENT_SESSIONS_TOKEN: 'test-token', POSTGRES_PASSWORD: SECRETS.POSTGRES_PASSWORD });
  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /STREAM_STORE_PASSWORD/);
});

test('the compose stack runs the one Temporal server release the dev server and the cluster run', () => {
  // Read as text: this holds without Docker, where the tests below skip.
  const text = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
  const images = [...text.matchAll(/image: temporalio\/(server|admin-tools):(\S+)/g)].map((match) => `${match[1]}:${match[2]}`);
  assert.deepEqual(images, ['admin-tools:' + TEMPORAL_SERVER_VERSION, 'server:' + TEMPORAL_SERVER_VERSION, 'admin-tools:' + TEMPORAL_SERVER_VERSION]);
});

test('the stack has PostgreSQL, Temporal, its UI and scalable workers, with no auto-setup image', { skip }, () => {
  const all = services(SECRETS);
  for (const name of ['postgresql', 'temporal-admin-tools', 'temporal', 'temporal-create-namespace', 'temporal-ui', 'worker']) {
    assert.ok(all[name], `service ${name} is missing`);
  }
  for (const [name, service] of Object.entries(all)) {
    assert.doesNotMatch(service.image ?? '', /auto-setup/, `${name} uses the deprecated auto-setup image`);
    // The project's own image is built from this repository, not pulled.
    if (service.image !== 'agent-sessions:local') assert.match(service.image ?? '', /:v?[0-9][^:]*$/, `${name} pins no version: ${service.image}`);
  }
  assert.equal(all['temporal']?.depends_on?.['temporal-admin-tools']?.condition, 'service_completed_successfully');
  assert.equal(all['worker']?.depends_on?.['temporal-create-namespace']?.condition, 'service_completed_successfully');

  const worker = all['worker'];
  assert.ok(worker?.build, 'the worker is built from the repository');
  assert.equal(worker.container_name, undefined, 'a fixed container_name prevents --scale');
  assert.equal(worker.ports, undefined, 'fixed host ports prevent --scale');
  assert.equal(worker.environment?.['TEMPORAL_ADDRESS'], 'temporal:7233');
});

test('the worker\'s parallel policy is set explicitly and follows ALLOW_PARALLEL_IN_PROGRESS', { skip }, () => {
  for (const [vars, expected] of [
    [{}, 'true'],
    [{ ALLOW_PARALLEL_IN_PROGRESS: 'false' }, 'false'],
  ] as const) {
    const worker = services({ ...SECRETS, ...vars })['worker'];
    assert.equal(worker?.environment?.['ALLOW_PARALLEL_IN_PROGRESS'], expected);
    const command = worker?.command ?? [];
    const flag = command.indexOf('--allow-parallel-in-progress');
    assert.equal(command[0], 'worker');
    assert.notEqual(flag, -1, `the worker command sets no policy: ${JSON.stringify(command)}`);
    assert.equal(command[flag + 1], expected);
  }
});

test('the HTTP service needs its token from the environment, publishes on loopback only and has a health check', { skip }, () => {
  const missing = compose(['config', '--quiet'], { POSTGRES_PASSWORD: 'test-only', STREAM_STORE_PASSWORD: 'streamonly' });
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr, /AGENT_SESSIONS_TOKEN/);
  const http = services(SECRETS)["http"] as ComposeService & { healthcheck?: { test?: string[] } };
  assert.ok(http, 'an http service');
  assert.equal(http.environment?.['AGENT_SESSIONS_TOKEN'], 'test-token');
  assert.ok(http.healthcheck?.test?.join(' ').includes('/healthz'));
  assert.ok((http.ports ?? []).every((port) => port.host_ip === '127.0.0.1'));
});

test("the workers and the HTTP service share the stream store, a database of its own in the compose PostgreSQL with a user of its own, made before either starts", { skip }, () => {
  const missing = compose(['config', '--quiet'], { POSTGRES_PASSWORD: 'test-only', AGENT_SESSIONS_TOKEN: 'test-token' });
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr, /STREAM_STORE_PASSWORD/);
  const all = services(SECRETS);
  const url = 'postgres://agent_sessions_streams:streamonly@postgresql:5432/agent_sessions_streams';
  for (const name of ['worker', 'http']) {
    const service = all[name] as ComposeService & { depends_on?: Record<string, { condition: string }> };
    assert.equal(service.environment?.['AGENT_SESSIONS_STREAM_STORE'], url, name);
    assert.equal(service.depends_on?.['stream-store-db']?.condition, 'service_completed_successfully', name);
  }
  const job = all['stream-store-db'] as ComposeService & { command?: string[] };
  assert.match(job.command?.join('\n') ?? '', /CREATE DATABASE agent_sessions_streams OWNER agent_sessions_streams/);
});

test('the Temporal server reads the configuration files `agent-sessions cluster` runs with, mounted where the image looks', { skip }, () => {
  const temporal = services(SECRETS)['temporal'];
  const env = temporal?.environment ?? {};
  // The image's entrypoint runs `temporal-server --env docker start`: the server reads
  // <TEMPORAL_ROOT>/<TEMPORAL_CONFIG_DIR>/docker.yaml.
  const configDir = `${env['TEMPORAL_ROOT']}/${env['TEMPORAL_CONFIG_DIR']}`;
  const mounts = Object.fromEntries((temporal?.volumes ?? []).map((volume) => [volume.target, volume]));
  for (const [target, file] of [
    [`${configDir}/docker.yaml`, 'production.yaml'],
    [env['DYNAMIC_CONFIG_FILE_PATH'] ?? '(DYNAMIC_CONFIG_FILE_PATH unset)', 'dynamic-config.yaml'],
  ] as const) {
    const mount = mounts[target];
    assert.ok(mount, `nothing is mounted at ${target}; mounted: ${Object.keys(mounts).join(', ')}`);
    assert.equal(mount.type, 'bind');
    assert.equal(mount.source, join(root, 'deploy', 'temporal', file));
    assert.equal(mount.read_only, true);
  }
  // The variables production.yaml reads, set for the compose network.
  assert.equal(env['POSTGRES_SEEDS'], 'postgresql');
  assert.equal(env['DB_PORT'], '5432');
  assert.equal(env['POSTGRES_PWD'], SECRETS.POSTGRES_PASSWORD);
  assert.equal(env['BIND_ON_IP'], '0.0.0.0');
});

test("the namespace job registers every search attribute the sessions index themselves with, each with its type", () => {
  const text = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
  for (const [name, type] of Object.entries(SESSION_SEARCH_ATTRIBUTES)) {
    assert.ok(text.includes(`${name}=${type}`), `${name}=${type} is registered by temporal-create-namespace`);
  }
});

test('Prometheus scrapes the HTTP service with its token and every worker on the metrics port the worker serves', { skip }, () => {
  const all = services(SECRETS);
  const prometheus = all['prometheus'];
  assert.ok(prometheus, 'a prometheus service');
  assert.match(prometheus.image ?? '', /^prom\/prometheus:v\d+\.\d+\.\d+$/);
  assert.ok((prometheus.ports ?? []).every((port) => port.host_ip === '127.0.0.1'), 'its UI has no login: loopback only');
  const config = (prometheus.volumes ?? []).find((volume) => volume.target === '/etc/prometheus/prometheus.yml');
  assert.equal(config?.source, join(root, 'deploy', 'prometheus', 'prometheus.yml'));
  assert.equal(config?.read_only, true);
  const text = readFileSync(config.source, 'utf8');

  // The workers: the port Prometheus asks every replica for is the one each one serves on all interfaces.
  const command = all['worker']?.command ?? [];
  const port = command[command.indexOf('--metrics-port') + 1];
  assert.equal(command[command.indexOf('--metrics-host') + 1], '0.0.0.0');
  assert.match(text, new RegExp(`dns_sd_configs:\\s+- names: \\["worker"\\]\\s+type: A\\s+port: ${port}\\b`));
  assert.equal(all['worker']?.ports, undefined, 'still no host port: the workers scale');

  // The HTTP service: its port, and its token from the same variable as the service's own, as a file.
  const http = all['http'];
  const httpPort = http?.command?.[(http.command.indexOf('--port') + 1)];
  assert.match(text, new RegExp(`targets: \\["http:${httpPort}"\\]`));
  const secret = (prometheus.secrets ?? []).find((s) => s.source === 'agent_sessions_token');
  assert.ok(secret, 'the token is mounted as a secret');
  assert.match(text, new RegExp(`credentials_file: ${secret.target}\\n`));
  const declared = (JSON.parse(compose(['config', '--format', 'json'], SECRETS).stdout) as { secrets: Record<string, { environment?: string }> }).secrets;
  assert.equal(declared['agent_sessions_token']?.environment, 'AGENT_SESSIONS_TOKEN');
});

test('Jaeger receives the traces of the workers and the HTTP service, its UI on loopback only, and the dashboard links to it', { skip }, () => {
  const all = services(SECRETS);
  const jaeger = all['jaeger'];
  assert.equal(jaeger?.image, 'jaegertracing/jaeger:2.12.0');
  assert.deepEqual(jaeger?.ports?.map((port) => [port.host_ip, port.published, port.target]), [['127.0.0.1', '16686', 16686]]);
  for (const name of ['worker', 'http']) {
    assert.equal(all[name]?.environment?.['OTEL_EXPORTER_OTLP_ENDPOINT'], 'http://jaeger:4318', name);
    assert.equal(all[name]?.environment?.['OTEL_SERVICE_NAME'], `agent-sessions-${name}`);
  }
  assert.equal(all['http']?.environment?.['AGENT_SESSIONS_TRACE_URL'], 'http://127.0.0.1:16686/trace/{traceId}');
  // An empty endpoint turns tracing off.
  assert.equal(services({ ...SECRETS, OTEL_EXPORTER_OTLP_ENDPOINT: '' })['worker']?.environment?.['OTEL_EXPORTER_OTLP_ENDPOINT'], '');
});
