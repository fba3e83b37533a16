/**
 * `agent-sessions cluster`, run as a user runs it: the production topology (PostgreSQL, the
 * Temporal server 1.32.0 on it, two workers, the HTTP service) on free loopback ports with its
 * data in a temporary folder. The first start on a machine may build the Temporal server with Go
 * (minutes); later ones reuse the per-user cache.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { bindProblem, findFreePort } from '../../src/devserver/dev-server';
import { CLUSTER_PORT_RANGE, clusterPorts, workerMetricsPort } from '../../src/devserver/cluster-ports';
import { findFreeClusterPort } from '../../src/devserver/throwaway-cluster';
import { isProcessAlive } from '../../src/devserver/executables';
import { findTemporalServerBinaries, TEMPORAL_SERVER_VERSION } from '../../src/devserver/temporal-server-binaries';
import { openSse, readAnswer } from '../../bench/sse-client';
import { startModelServer } from '../../src/model-server';
import { metricSeries, parseMetrics, ROOT, runCli, runTemporalCli, spawnCli } from '../helpers';

/** The first start may build the server binaries with Go. */
const FIRST_START_MS = 15 * 60_000;

/** A data folder PostgreSQL can enter even when it runs as the `postgres` user (this process being root). */
async function dataFolder(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-sessions-cluster-'));
  await chmod(dir, 0o755);
  t.after(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'data');
}

type Cluster = Awaited<ReturnType<typeof spawnCli>>;

async function startCluster(args: string[], timeoutMs: number, env: NodeJS.ProcessEnv = {}): Promise<Cluster> {
  const cluster = await spawnCli(['cluster', ...args, '--allow-parallel-in-progress', 'true'], env);
  const deadline = Date.now() + timeoutMs;
  let exit: number | null | undefined;
  void cluster.exited.then((code) => (exit = code));
  while (!cluster.output().includes('agent-sessions cluster is running')) {
    if (exit !== undefined) assert.fail(`the cluster exited with ${exit} before it was up:\n${cluster.output()}`);
    if (Date.now() > deadline) {
      cluster.child.kill('SIGINT');
      assert.fail(`the cluster was not up within ${timeoutMs / 1000}s:\n${cluster.output()}`);
    }
    await sleep(250);
  }
  return cluster;
}

/** Every process below `pid` (the workers, the HTTP service, the Temporal server, PostgreSQL and its backends). */
function descendants(pid: number): number[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const visit = (parent: number): void => {
    for (const [child, ppid] of table) {
      if (ppid === parent) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

async function stopCluster(cluster: Cluster): Promise<{ code: number | null; children: number[] }> {
  const children = descendants(cluster.child.pid ?? -1);
  cluster.child.kill('SIGINT');
  const code = await cluster.exited;
  return { code, children };
}

test('the cluster runs on PostgreSQL, serves every command, stops everything on SIGINT and keeps its data for the next start', { timeout: FIRST_START_MS + 5 * 60_000 }, async (t) => {
  const data = await dataFolder(t);
  const port = await findFreeClusterPort();
  const httpPort = await findFreePort();
  const address = `127.0.0.1:${port}`;
  // Every helper below (runCli, runTemporalCli) talks to the cluster, as a user's shell would.
  process.env.TEMPORAL_ADDRESS = address;
  const args = ['--port', String(port), '--http-port', String(httpPort), '--workers', '2', '--data', data];

  // The workers' agent calls a scripted model that streams, so the words can be watched crossing processes.
  const greeting = 'Hello from the cluster: these words went from a worker process, through the session’s stream, to the HTTP service.';
  const model = await startModelServer({
    script: { conversations: [{ name: 'hello', match: { firstUserMessage: '^Say hello$' }, steps: [{ respond: { content: greeting } }] }] },
    streaming: { tokensPerSecond: 40 },
  });
  t.after(() => model.close());
  const first = await startCluster(args, FIRST_START_MS, { OPENAI_BASE_URL: model.url, AGENT_SESSIONS_MODEL: 'scripted' });
  t.after(() => void first.child.kill('SIGKILL'));
  assert.match(first.output(), /new data in/);
  assert.match(first.output(), /schema of temporal: none -> \d+\.\d+/);
  assert.match(first.output(), /registered namespace default/);

  const described = await runTemporalCli(['operator', 'cluster', 'describe', '--output', 'json']);
  assert.equal(described.code, 0, described.stderr);
  const info = JSON.parse(described.stdout) as { persistenceStore: string; visibilityStore: string; serverVersion: string };
  assert.equal(info.persistenceStore, 'postgres12');
  assert.equal(info.visibilityStore, 'postgres12');
  assert.equal(info.serverVersion, TEMPORAL_SERVER_VERSION);

  const todos = [
    { content: 'Bring the cluster up', status: 'completed' },
    { content: 'Write through it', status: 'in_progress' },
  ];
  const written = await runCli(['write', 'cluster-demo', '--json', JSON.stringify({ todos })]);
  assert.equal(written.code, 0, written.stderr);
  assert.equal(written.stdout.trim(), 'Updated todo list: 0 pending, 1 in progress, 1 completed');
  const read = await runCli(['todos', 'cluster-demo', '--json']);
  assert.deepEqual(JSON.parse(read.stdout), todos);
  const viaHttp = await fetch(`http://127.0.0.1:${httpPort}/sessions/cluster-demo/todos`);
  assert.deepEqual(await viaHttp.json(), todos);

  // Each worker serves Temporal's metrics and ours on its own port, as the summary prints them;
  // the HTTP service counted the read it answered, by its route.
  const metricsPorts = [workerMetricsPort(port, 0), workerMetricsPort(port, 1)];
  assert.match(
    first.output(),
    new RegExp(`Metrics \\(Prometheus\\): worker-1 http://127\\.0\\.0\\.1:${metricsPorts[0]}/metrics, worker-2 http://127\\.0\\.0\\.1:${metricsPorts[1]}/metrics, HTTP service http://127\\.0\\.0\\.1:${httpPort}/metrics`),
  );
  for (const metricsPort of metricsPorts) {
    const samples = parseMetrics(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
    assert.ok(samples.some((s) => s.name === 'temporal_num_pollers'), `worker metrics on ${metricsPort} hold Temporal's`);
  }
  const served = parseMetrics(await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text());
  assert.deepEqual(
    metricSeries(served, 'agent_sessions_http_request_duration_seconds_count').filter((s) => s.labels['route'] === '/sessions/{id}/todos'),
    [{ labels: { method: 'GET', route: '/sessions/{id}/todos', status: '200' }, value: 1 }],
  );

  // A worker process streams the model's words; the HTTP service, another process, serves them.
  assert.equal((await runCli(['start', 'cluster-live'])).code, 0);
  const words = await openSse(`http://127.0.0.1:${httpPort}/sessions/cluster-live/stream`);
  assert.equal(words.status, 200);
  const chat = runCli(['chat', 'cluster-live', 'Say hello', '--no-stream']);
  let texts = 0;
  const streamed = await readAnswer(words, { onEvent: (event) => void (event.type === 'text' && texts++) });
  assert.equal(streamed.answer?.text, greeting);
  assert.ok(texts > 1, 'the words came in pieces, as they were written');
  const chatted = await chat;
  assert.equal(chatted.code, 0, chatted.stderr);
  assert.equal(chatted.stdout, `${greeting}\n`);

  const beforeStop = first.output().length;
  const stopped = await stopCluster(first);
  assert.equal(stopped.code, 0, first.output());
  assert.ok(stopped.children.length >= 5, `expected PostgreSQL, Temporal, two workers and HTTP below the cluster, got ${stopped.children.length}`);
  assert.deepEqual(stopped.children.filter(isProcessAlive), [], `processes left behind:\n${first.output()}`);
  for (const p of [...Object.values(clusterPorts(port)), httpPort, ...metricsPorts]) assert.equal(await bindProblem('127.0.0.1', p), undefined, `port ${p} still taken`);
  // Ctrl-C prints one line per part that stopped, and nothing else (the server's chatter is in its log).
  const afterStop = first.output().slice(beforeStop);
  assert.deepEqual(afterStop.split('\n').filter((line) => line !== ''), [
    'stopped the HTTP service',
    'stopped worker-2',
    'stopped worker-1',
    `stopped the Temporal server (its log: ${join(data, 'temporal.log')})`,
    `stopped PostgreSQL (its log: ${join(data, 'postgres.log')}; the data stays in ${data})`,
  ]);

  const second = await startCluster(args, 5 * 60_000);
  t.after(() => void second.child.kill('SIGKILL'));
  assert.match(second.output(), /existing data in/);
  assert.match(second.output(), /schema of temporal is current/);
  assert.doesNotMatch(second.output(), /registered namespace/);
  const again = await runCli(['todos', 'cluster-demo', '--json']);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(JSON.parse(again.stdout), todos);
  const secondStop = await stopCluster(second);
  assert.equal(secondStop.code, 0, second.output());
  assert.deepEqual(secondStop.children.filter(isProcessAlive), []);
});

test('a taken port is refused by name before anything starts', { timeout: 60_000 }, async (t) => {
  const data = await dataFolder(t);
  const port = await findFreeClusterPort();
  process.env.TEMPORAL_ADDRESS = `127.0.0.1:${port}`;
  const holder: Server = createServer();
  await new Promise<void>((done) => holder.listen(clusterPorts(port).postgres, '127.0.0.1', done));
  t.after(() => new Promise<void>((done) => holder.close(() => done())));

  const cluster = await spawnCli(['cluster', '--port', String(port), '--data', data, '--allow-parallel-in-progress', 'false']);
  assert.equal(await cluster.exited, 1);
  assert.match(cluster.output(), new RegExp(`port ${clusterPorts(port).postgres} on 127\\.0\\.0\\.1, for PostgreSQL \\(--port - 1800\\), is not available \\(EADDRINUSE\\)`));
  await assert.rejects(stat(data), { code: 'ENOENT' }, 'nothing may be created before the ports are checked');
});

test('a cluster without a policy, or with a frontend port out of range, is refused with exit code 2', async () => {
  process.env.TEMPORAL_ADDRESS = '127.0.0.1:7333';
  const noPolicy = await runCli(['cluster', '--port', '7333'], { env: { ALLOW_PARALLEL_IN_PROGRESS: '' } });
  assert.equal(noPolicy.code, 2);
  assert.match(noPolicy.stderr, /missing setting allowParallelInProgress/);
  const low = await runCli(['cluster', '--port', '2000', '--allow-parallel-in-progress', 'true']);
  assert.equal(low.code, 2);
  assert.match(low.stderr, new RegExp(`--port must be an integer from ${CLUSTER_PORT_RANGE.min} to ${CLUSTER_PORT_RANGE.max}, got "2000"`));
});

const noCompose = spawnSync('docker', ['compose', 'version']).status === 0 ? undefined : 'the docker compose plugin is not installed';

test('the same Temporal server renders the shared configuration with docker compose\'s environment, as the image loads it', { skip: noCompose, timeout: FIRST_START_MS }, async (t) => {
  const config = spawnSync('docker', ['compose', '--project-directory', ROOT, 'config', '--format', 'json'], {
    cwd: ROOT,
    env: { ...process.env, POSTGRES_PASSWORD: 'compose-secret', STREAM_STORE_PASSWORD: 'streamsecret', AGENT_SESSIONS_TOKEN: 'token' },
    encoding: 'utf8',
  });
  assert.equal(config.status, 0, config.stderr);
  const temporal = (JSON.parse(config.stdout) as {
    services: Record<string, { environment: Record<string, string>; volumes: Array<{ source: string; target: string }> }>;
  }).services['temporal'];
  assert.ok(temporal);
  const containerRoot = temporal.environment['TEMPORAL_ROOT'] ?? '/etc/temporal';

  // The container's /etc/temporal, with the files compose mounts into it.
  const root = await mkdtemp(join(tmpdir(), 'agent-sessions-etc-temporal-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  for (const volume of temporal.volumes) {
    const target = join(root, relative(containerRoot, volume.target));
    await mkdir(dirname(target), { recursive: true });
    await copyFile(volume.source, target);
  }
  const { server } = await findTemporalServerBinaries();
  // `render-config` loads the files exactly as `start` does (and as the image's `--env docker start` will).
  const rendered = spawnSync(server, ['--env', 'docker', 'render-config'], {
    cwd: root,
    env: { PATH: process.env['PATH'] ?? '', ...temporal.environment },
    encoding: 'utf8',
  });
  assert.equal(rendered.status, 0, rendered.stderr + rendered.stdout);
  assert.match(rendered.stderr, /Loading config files=\[config\/agent-sessions\/docker\.yaml\]/);
  assert.equal(rendered.stdout.match(/connectAddr: postgresql:5432/g)?.length, 2, rendered.stdout);
  assert.equal(rendered.stdout.match(/pluginName: postgres12/g)?.length, 2);
  assert.match(rendered.stdout, /databaseName: temporal_visibility/);
  assert.match(rendered.stdout, /bindOnIP: 0\.0\.0\.0/);
  assert.match(rendered.stdout, /grpcPort: 7233/);
  assert.match(rendered.stdout, /filepath: \/etc\/temporal\/config\/agent-sessions\/dynamic-config\.yaml/);
});
