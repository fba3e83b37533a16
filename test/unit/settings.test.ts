import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { inspect } from 'node:util';
import { InvalidSettingError } from '../../src/client/errors';
import { AGENT_DEFAULTS, loadSettings, requirePolicy, TEMPORAL_DEFAULTS, type Settings } from '../../src/config';
import { matchesToolPattern } from '../../src/config/agent-settings';

const ROOT = join(__dirname, '..', '..');
const CWD = join(tmpdir(), 'agent-sessions-settings-cwd');

/** Settings of `env` alone, resolved against a fixed working directory. */
function load(env: NodeJS.ProcessEnv, flags: Parameters<typeof loadSettings>[1] = {}): Settings {
  return loadSettings(env, flags, CWD);
}

/** Asserts that `env` (and `flags`) are refused with an InvalidSettingError whose message is `message`, matches it, or passes it. */
function assertRefused(env: NodeJS.ProcessEnv, message: RegExp | string | ((message: string) => boolean), flags: Parameters<typeof loadSettings>[1] = {}): void {
  assert.throws(
    () => load(env, flags),
    (error: unknown) => {
      assert.ok(error instanceof InvalidSettingError, `expected InvalidSettingError, got ${String(error)}`);
      assert.equal(error.code, 'invalid-setting');
      if (typeof message === 'string') assert.equal(error.message, message);
      else if (typeof message === 'function') assert.ok(message(error.message), error.message);
      else assert.match(error.message, message);
      return true;
    },
  );
}

/** Source text without block comments and whole-line comments (TSDoc examples may show `loadSettings(process.env)`). */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'agent-sessions-settings-'));
}

test('an empty environment gives the documented defaults and no policy', () => {
  const settings = load({});
  assert.deepEqual({ ...settings.temporal }, { ...TEMPORAL_DEFAULTS, addressGiven: false });
  assert.equal(settings.policy, undefined);
  assert.equal(settings.continueAsNewAfter, undefined);
  assert.deepEqual({ ...settings.http }, { host: '127.0.0.1', port: 8080, corsOrigins: [], allowedHosts: [] });
  assert.deepEqual(settings.metrics, { host: '127.0.0.1' }, 'no worker metrics endpoint unless asked for');
  assert.deepEqual(settings.paths, { cacheDir: join(homedir(), '.cache', 'agent-sessions'), dataDir: join(CWD, 'data') });
  const { apiKey, ...agent } = settings.agent;
  assert.equal(apiKey(), undefined);
  assert.deepEqual(agent, { model: 'gpt-4o-mini', maxSteps: 25, maxContextChars: 100_000, nudge: true, approveTools: ['mcp__*'], stream: true, streamBatchMs: 200 });
});

test('empty and blank variables count as unset, as compose writes them for an unset default', () => {
  const blank = Object.fromEntries(
    ['TEMPORAL_ADDRESS', 'TEMPORAL_TLS', 'ALLOW_PARALLEL_IN_PROGRESS', 'AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER', 'AGENT_SESSIONS_TOKEN', 'OPENAI_BASE_URL', 'AGENT_SESSIONS_NUDGE', 'AGENT_SESSIONS_STREAM', 'AGENT_SESSIONS_WORKSPACE', 'AGENT_SESSIONS_METRICS_PORT', 'AGENT_SESSIONS_METRICS_HOST'].map(
      (name) => [name, '  '],
    ),
  );
  assert.deepEqual(JSON.parse(JSON.stringify(load(blank))), JSON.parse(JSON.stringify(load({}))));
});

describe('the Temporal connection', () => {
  test('TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and AGENT_SESSIONS_TASK_QUEUE are taken as given, trimmed', () => {
    const { temporal } = load({ TEMPORAL_ADDRESS: ' temporal:7233 ', TEMPORAL_NAMESPACE: 'prod', AGENT_SESSIONS_TASK_QUEUE: 'sessions-2' });
    assert.deepEqual({ ...temporal }, { address: 'temporal:7233', namespace: 'prod', taskQueue: 'sessions-2', addressGiven: true });
    for (const address of ['[::1]:7233', 'my.temporal.example', 'ns.acct.tmprl.cloud:7233', '127.0.0.1:65535']) {
      assert.equal(load({ TEMPORAL_ADDRESS: address }).temporal.address, address);
    }
  });

  test('a TEMPORAL_ADDRESS that is not host:port is refused by name', () => {
    for (const address of ['http://127.0.0.1:7233', '127.0.0.1:0', '127.0.0.1:70000', 'two words:7233', 'host:port', 'host/path:7233']) {
      assertRefused({ TEMPORAL_ADDRESS: address }, (message) => message.startsWith('TEMPORAL_ADDRESS must be host:port with a port from 1 to 65535') && message.endsWith(`got ${JSON.stringify(address)}`));
    }
  });

  test('TEMPORAL_TLS is true or false; an API key implies TLS unless TEMPORAL_TLS=false', () => {
    assert.equal(load({ TEMPORAL_TLS: 'true' }).temporal.tls, true);
    assert.equal(load({ TEMPORAL_TLS: 'false' }).temporal.tls, undefined);
    assert.equal(load({ TEMPORAL_API_KEY: 'key' }).temporal.tls, true);
    assert.equal(load({ TEMPORAL_API_KEY: 'key' }).temporal.apiKey, 'key');
    assert.equal(load({ TEMPORAL_API_KEY: 'key', TEMPORAL_TLS: 'false' }).temporal.tls, undefined);
    for (const value of ['yes', '1', 'on']) assertRefused({ TEMPORAL_TLS: value }, `TEMPORAL_TLS must be true or false, got "${value}"`);
  });

  test('the TLS files are read; one that cannot be read is refused naming the variable and the path', () => {
    const dir = scratch();
    for (const name of ['cert.pem', 'key.pem', 'ca.pem']) writeFileSync(join(dir, name), `${name} bytes`);
    const { tls } = load({
      TEMPORAL_TLS_CERT: join(dir, 'cert.pem'),
      TEMPORAL_TLS_KEY: join(dir, 'key.pem'),
      TEMPORAL_TLS_CA: join(dir, 'ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    }).temporal;
    assert.ok(typeof tls === 'object');
    assert.equal(tls.clientCertPair?.crt.toString(), 'cert.pem bytes');
    assert.equal(tls.clientCertPair?.key.toString(), 'key.pem bytes');
    assert.equal(tls.serverRootCACertificate?.toString(), 'ca.pem bytes');
    assert.equal(tls.serverNameOverride, 'temporal.internal');

    const missing = join(dir, 'missing.pem');
    assertRefused({ TEMPORAL_TLS_CA: missing }, (message) => message.startsWith(`TEMPORAL_TLS_CA=${missing} cannot be read: ENOENT`));
    assertRefused({ TEMPORAL_TLS_CERT: join(dir, 'cert.pem'), TEMPORAL_TLS_KEY: dir }, /^TEMPORAL_TLS_KEY=.* cannot be read: EISDIR/);
    assertRefused({ TEMPORAL_TLS_CERT: join(dir, 'cert.pem') }, /^TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together/);
  });
});

describe('the parallel policy', () => {
  test('ALLOW_PARALLEL_IN_PROGRESS gives the policy; unset or empty gives none', () => {
    assert.deepEqual(load({ ALLOW_PARALLEL_IN_PROGRESS: 'true' }).policy, { allowParallelInProgress: true });
    assert.deepEqual(load({ ALLOW_PARALLEL_IN_PROGRESS: ' False ' }).policy, { allowParallelInProgress: false });
    assert.equal(load({ ALLOW_PARALLEL_IN_PROGRESS: '' }).policy, undefined);
  });

  test('a malformed policy is refused naming where it came from, the flag or the variable', () => {
    assertRefused({ ALLOW_PARALLEL_IN_PROGRESS: 'yes' }, 'ALLOW_PARALLEL_IN_PROGRESS must be true or false, got "yes"');
    assertRefused({}, '--allow-parallel-in-progress must be true or false, got "maybe"', { allowParallelInProgress: 'maybe' });
  });

  test('the flag overrides the variable, even a malformed one', () => {
    assert.deepEqual(load({ ALLOW_PARALLEL_IN_PROGRESS: 'true' }, { allowParallelInProgress: 'false' }).policy, { allowParallelInProgress: false });
    assert.deepEqual(load({ ALLOW_PARALLEL_IN_PROGRESS: 'maybe' }, { allowParallelInProgress: 'true' }).policy, { allowParallelInProgress: true });
  });

  test('a command that needs the policy and has none says which setting is missing and how to give it', () => {
    const missing =
      'missing setting allowParallelInProgress: pass --allow-parallel-in-progress <true|false> or set ALLOW_PARALLEL_IN_PROGRESS=true|false ' +
      '(true: several todos may be in_progress at once; false: at most one). It is a deployment choice with no default.';
    assert.throws(() => requirePolicy(load({}).policy), (error: unknown) => error instanceof InvalidSettingError && error.message === missing);
    // An empty flag is a policy asked for and not given, not an absent flag.
    assertRefused({ ALLOW_PARALLEL_IN_PROGRESS: 'true' }, missing, { allowParallelInProgress: '' });
    assert.deepEqual(requirePolicy(load({ ALLOW_PARALLEL_IN_PROGRESS: 'true' }).policy), { allowParallelInProgress: true });
  });
});

test('AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER is an integer from 10 to 2000', () => {
  assert.equal(load({ AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER: '10' }).continueAsNewAfter, 10);
  assert.equal(load({ AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER: ' 2000 ' }).continueAsNewAfter, 2000);
  for (const value of ['abc', '9', '2001', '10.5', '-20', '1e3']) {
    assertRefused(
      { AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER: value },
      `AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER must be an integer from 10 to 2000 (applied events per run), got ${JSON.stringify(value)}`,
    );
  }
});

describe('the HTTP service', () => {
  test('token, CORS origins and allowed hosts come from the environment; lists are comma-separated and trimmed', () => {
    const { http } = load({
      AGENT_SESSIONS_TOKEN: 'tok.en',
      AGENT_SESSIONS_CORS_ORIGINS: 'https://a.example, https://b.example,',
      AGENT_SESSIONS_ALLOWED_HOSTS: 'agents.example.com , localhost:9090',
    });
    assert.equal(http.token, 'tok.en');
    assert.deepEqual(http.corsOrigins, ['https://a.example', 'https://b.example']);
    assert.deepEqual(http.allowedHosts, ['agents.example.com', 'localhost:9090']);
  });

  test('the host and port come from the flags, and a port out of range is refused', () => {
    const { http } = load({}, { httpHost: '0.0.0.0', httpPort: 9090 });
    assert.equal(http.host, '0.0.0.0');
    assert.equal(http.port, 9090);
    for (const port of [0, 65536, 80.5]) assertRefused({}, `the HTTP port must be an integer from 1 to 65535, got ${port}`, { httpPort: port });
    assertRefused({}, /^--host must name an address to bind/, { httpHost: ' ' });
  });
});

describe("the worker's metrics endpoint", () => {
  test('the port and host come from AGENT_SESSIONS_METRICS_PORT and AGENT_SESSIONS_METRICS_HOST, the flags winning', () => {
    assert.deepEqual(load({ AGENT_SESSIONS_METRICS_PORT: ' 9464 ', AGENT_SESSIONS_METRICS_HOST: '0.0.0.0' }).metrics, { port: 9464, host: '0.0.0.0' });
    assert.deepEqual(load({ AGENT_SESSIONS_METRICS_PORT: 'oops', AGENT_SESSIONS_METRICS_HOST: '0.0.0.0' }, { metricsPort: '0', metricsHost: '::1' }).metrics, { port: 0, host: '::1' });
  });

  test('a port that is not an integer from 0 to 65535 is refused naming the flag or the variable and the value', () => {
    for (const port of ['nine', '-1', '65536', '80.5', '0x50', ' ']) {
      assertRefused({}, `--metrics-port must be an integer from 0 to 65535 (0: any free port), got ${JSON.stringify(port)}`, { metricsPort: port });
    }
    for (const port of ['nine', '70000']) {
      assertRefused({ AGENT_SESSIONS_METRICS_PORT: port }, `AGENT_SESSIONS_METRICS_PORT must be an integer from 0 to 65535 (0: any free port), got ${JSON.stringify(port)}`);
    }
    assertRefused({}, /^--metrics-host must name an address to bind/, { metricsHost: '' });
  });
});

describe('paths', () => {
  test('the cache folder is AGENT_SESSIONS_CACHE_DIR, else an absolute XDG_CACHE_HOME, else ~/.cache; a relative XDG_CACHE_HOME is ignored', () => {
    const home = join(homedir(), '.cache', 'agent-sessions');
    assert.equal(load({ AGENT_SESSIONS_CACHE_DIR: '/var/cache/as', XDG_CACHE_HOME: '/xdg' }).paths.cacheDir, '/var/cache/as');
    assert.equal(load({ XDG_CACHE_HOME: '/xdg' }).paths.cacheDir, '/xdg/agent-sessions');
    assert.equal(load({ XDG_CACHE_HOME: 'relative/cache' }).paths.cacheDir, home);
    assert.equal(load({}).paths.cacheDir, home);
  });

  test('the data folder is AGENT_SESSIONS_DATA_DIR, relative to the working directory, else ./data; TEMPORAL_CLI_PATH is kept as given', () => {
    assert.equal(load({ AGENT_SESSIONS_DATA_DIR: 'state' }).paths.dataDir, join(CWD, 'state'));
    assert.equal(load({ AGENT_SESSIONS_DATA_DIR: '/srv/state' }).paths.dataDir, '/srv/state');
    assert.equal(load({ TEMPORAL_CLI_PATH: '/opt/temporal' }).paths.temporalCliPath, '/opt/temporal');
  });
});

describe('the agent loop', () => {
  test('OPENAI_BASE_URL is an http or https URL', () => {
    assert.equal(load({ OPENAI_BASE_URL: 'http://127.0.0.1:8090/v1' }).agent.baseUrl, 'http://127.0.0.1:8090/v1');
    assert.equal(load({ OPENAI_BASE_URL: 'https://api.openai.com/v1' }).agent.baseUrl, 'https://api.openai.com/v1');
    for (const value of ['api.openai.com', 'ftp://example.com/v1', 'not a url']) {
      assertRefused({ OPENAI_BASE_URL: value }, `OPENAI_BASE_URL must be an http or https URL, e.g. https://api.openai.com/v1, got ${JSON.stringify(value)}`);
    }
  });

  test('OPENAI_API_KEY is given only through apiKey(), and one with spaces is refused without showing it', () => {
    assert.equal(load({ OPENAI_API_KEY: ' sk-test-123 ' }).agent.apiKey(), 'sk-test-123');
    assert.throws(
      () => load({ OPENAI_API_KEY: 'sk-secret part' }),
      (error: unknown) => error instanceof InvalidSettingError && /^OPENAI_API_KEY holds spaces/.test(error.message) && !error.message.includes('secret'),
    );
  });

  test('AGENT_SESSIONS_MODEL names the model, without spaces', () => {
    assert.equal(AGENT_DEFAULTS.model, 'gpt-4o-mini');
    assert.equal(load({ AGENT_SESSIONS_MODEL: 'qwen2.5:7b' }).agent.model, 'qwen2.5:7b');
    assertRefused({ AGENT_SESSIONS_MODEL: 'gpt 4o' }, /^AGENT_SESSIONS_MODEL must be a model name .* got "gpt 4o"$/);
  });

  test('AGENT_SESSIONS_MAX_STEPS is at least 1 and AGENT_SESSIONS_MAX_CONTEXT_CHARS at least 2000', () => {
    assert.equal(load({ AGENT_SESSIONS_MAX_STEPS: '1' }).agent.maxSteps, 1);
    assert.equal(load({ AGENT_SESSIONS_MAX_CONTEXT_CHARS: '2000' }).agent.maxContextChars, 2000);
    for (const value of ['0', 'ten', '2.5']) {
      assertRefused({ AGENT_SESSIONS_MAX_STEPS: value }, `AGENT_SESSIONS_MAX_STEPS must be an integer of at least 1 (model calls per turn), got ${JSON.stringify(value)}`);
    }
    assertRefused({ AGENT_SESSIONS_MAX_CONTEXT_CHARS: '1999' }, 'AGENT_SESSIONS_MAX_CONTEXT_CHARS must be an integer of at least 2000 (characters of context), got "1999"');
  });

  test('AGENT_SESSIONS_NUDGE is true or false', () => {
    assert.equal(load({ AGENT_SESSIONS_NUDGE: 'false' }).agent.nudge, false);
    assert.equal(load({ AGENT_SESSIONS_NUDGE: 'true' }).agent.nudge, true);
    assertRefused({ AGENT_SESSIONS_NUDGE: 'no' }, 'AGENT_SESSIONS_NUDGE must be true or false, got "no"');
  });

  test('AGENT_SESSIONS_STREAM is true or false, true unless set; AGENT_SESSIONS_STREAM_BATCH_MS a whole number of milliseconds from 10 to 10000', () => {
    assert.equal(load({}).agent.stream, true);
    assert.equal(load({ AGENT_SESSIONS_STREAM: 'false' }).agent.stream, false);
    assertRefused({ AGENT_SESSIONS_STREAM: 'off' }, 'AGENT_SESSIONS_STREAM must be true or false, got "off"');
    assert.equal(load({ AGENT_SESSIONS_STREAM_BATCH_MS: '50' }).agent.streamBatchMs, 50);
    for (const value of ['5', '20000', '0.5', 'fast']) {
      assertRefused({ AGENT_SESSIONS_STREAM_BATCH_MS: value }, (message) => message.startsWith('AGENT_SESSIONS_STREAM_BATCH_MS must be'));
    }
  });

  test('AGENT_SESSIONS_STREAM_STORE is a SQLite file in the data folder unless set, a path from the working folder, or a postgres:// URL whose password never shows', () => {
    assert.equal(load({}).streams.location, join(CWD, 'data', 'streams.sqlite'));
    assert.equal(load({ AGENT_SESSIONS_DATA_DIR: '/srv/state' }).streams.location, join('/srv/state', 'streams.sqlite'));
    assert.equal(load({ AGENT_SESSIONS_STREAM_STORE: 'words/streams.db' }).streams.location, join(CWD, 'words', 'streams.db'));
    const postgres = load({ AGENT_SESSIONS_STREAM_STORE: 'postgres://streams:s3cret@db:5432/words', AGENT_SESSIONS_STREAM_POOL: '4', AGENT_SESSIONS_STREAM_RETENTION_MINUTES: '5' });
    assert.equal(postgres.streams.location, 'postgres://streams:s3cret@db:5432/words');
    assert.equal(postgres.streams.poolSize, 4);
    assert.equal(postgres.streams.retentionMinutes, 5);
    assert.doesNotMatch(JSON.stringify(postgres), /s3cret/);
    assert.deepEqual([load({}).streams.poolSize, load({}).streams.retentionMinutes], [10, 60]);
    assertRefused({ AGENT_SESSIONS_STREAM_STORE: 'redis://cache:6379' }, 'AGENT_SESSIONS_STREAM_STORE must be a postgres:// URL or the path of a SQLite file, got a redis: URL');
    assertRefused({ AGENT_SESSIONS_STREAM_POOL: '0' }, (message) => message.startsWith('AGENT_SESSIONS_STREAM_POOL must be an integer from 1 to 1000'));
    assertRefused({ AGENT_SESSIONS_STREAM_RETENTION_MINUTES: 'soon' }, (message) => message.startsWith('AGENT_SESSIONS_STREAM_RETENTION_MINUTES must be'));
  });

  test('AGENT_SESSIONS_APPROVE_TOOLS lists tool names OpenAI accepts or patterns of them, once each; unset, every MCP tool; none, nothing', () => {
    assert.deepEqual(load({ AGENT_SESSIONS_APPROVE_TOOLS: 'shell, write_file,shell,' }).agent.approveTools, ['shell', 'write_file']);
    assert.deepEqual(load({ AGENT_SESSIONS_APPROVE_TOOLS: 'mcp__fs__write_*,mcp__git__*' }).agent.approveTools, ['mcp__fs__write_*', 'mcp__git__*']);
    assert.deepEqual(load({}).agent.approveTools, ['mcp__*']);
    assert.deepEqual(load({ AGENT_SESSIONS_APPROVE_TOOLS: ' ' }).agent.approveTools, ['mcp__*']);
    assert.deepEqual(load({ AGENT_SESSIONS_APPROVE_TOOLS: 'none' }).agent.approveTools, []);
    assertRefused({ AGENT_SESSIONS_APPROVE_TOOLS: 'shell,rm -rf' }, /^AGENT_SESSIONS_APPROVE_TOOLS must list tool names .* got "rm -rf"$/);
  });

  test('a tool pattern matches whole names, * standing for any run of characters', () => {
    assert.ok(matchesToolPattern('mcp__fs__write_file', ['mcp__*']));
    assert.ok(matchesToolPattern('mcp__fs__write_file', ['mcp__fs__write_*']));
    assert.ok(!matchesToolPattern('mcp__fs__read_file', ['mcp__fs__write_*']));
    assert.ok(!matchesToolPattern('xmcp__fs__read_file', ['mcp__*']));
    assert.ok(matchesToolPattern('read_file', ['read_file']));
    assert.ok(!matchesToolPattern('read_files', ['read_file']));
  });

  test('AGENT_SESSIONS_WORKSPACE is an existing folder, made absolute', () => {
    const dir = scratch();
    mkdirSync(join(dir, 'work'));
    writeFileSync(join(dir, 'file.txt'), '');
    assert.equal(loadSettings({ AGENT_SESSIONS_WORKSPACE: 'work' }, {}, dir).agent.workspace, join(dir, 'work'));
    assert.equal(load({}).agent.workspace, undefined);
    assertRefused({ AGENT_SESSIONS_WORKSPACE: join(dir, 'nowhere') }, /^AGENT_SESSIONS_WORKSPACE must be an existing folder .*: no such folder$/);
    assertRefused({ AGENT_SESSIONS_WORKSPACE: join(dir, 'file.txt') }, /^AGENT_SESSIONS_WORKSPACE must be an existing folder .*: it is not a folder$/);
  });
});

test('no secret appears in the JSON or the inspected form of the settings, yet each stays usable', () => {
  const dir = scratch();
  writeFileSync(join(dir, 'cert.pem'), 'CERTIFICATE-BYTES');
  writeFileSync(join(dir, 'key.pem'), 'PRIVATE-KEY-BYTES');
  const settings = load({
    OPENAI_API_KEY: 'sk-openai-secret',
    TEMPORAL_API_KEY: 'temporal-secret',
    AGENT_SESSIONS_TOKEN: 'http-secret',
    TEMPORAL_TLS_CERT: join(dir, 'cert.pem'),
    TEMPORAL_TLS_KEY: join(dir, 'key.pem'),
  });
  const privateKeyBytes = Buffer.from('PRIVATE-KEY-BYTES').toJSON().data.join(',');
  for (const shown of [JSON.stringify(settings), JSON.stringify(settings, null, 2), inspect(settings, { depth: null }), `${inspect(settings.temporal)} ${inspect(settings.agent)}`]) {
    for (const secret of ['sk-openai-secret', 'temporal-secret', 'http-secret', 'PRIVATE-KEY-BYTES', privateKeyBytes]) {
      assert.ok(!shown.includes(secret), `${secret} is not shown in ${shown}`);
    }
  }
  assert.match(JSON.stringify(settings), /"apiKey":"\[hidden\]"/);
  assert.equal(settings.agent.apiKey(), 'sk-openai-secret');
  assert.equal(settings.temporal.apiKey, 'temporal-secret');
  assert.equal({ ...settings.temporal }.apiKey, 'temporal-secret', 'a copy passed to a connection keeps the key');
  assert.equal(settings.http.token, 'http-secret');
});

describe('the library reads no environment', () => {
  test('a client made with no options targets the defaults, whatever the environment says', async () => {
    const script = `
      const { SessionClient } = require('./src/client');
      const { resolveTemporalConfig } = require('./src/config');
      const { bundleCacheFile } = require('./src/worker/workflow-bundle');
      const client = SessionClient.lazy({});
      process.stdout.write(JSON.stringify({
        address: client.temporal.connection.options.address,
        namespace: client.temporal.options.namespace,
        taskQueue: client.taskQueue,
        config: resolveTemporalConfig({}),
        bundle: bundleCacheFile({ allowParallelInProgress: true }),
      }));`;
    const bogus = {
      TEMPORAL_ADDRESS: 'bogus.invalid:1',
      TEMPORAL_NAMESPACE: 'bogus',
      AGENT_SESSIONS_TASK_QUEUE: 'bogus',
      TEMPORAL_API_KEY: 'bogus',
      AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER: 'not a number',
      AGENT_SESSIONS_CACHE_DIR: '/bogus/cache',
      XDG_CACHE_HOME: '/bogus/xdg',
    };
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, env: { ...process.env, ...bogus } }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
      ),
    );
    const seen = JSON.parse(stdout);
    assert.equal(seen.address, TEMPORAL_DEFAULTS.address);
    assert.equal(seen.namespace, TEMPORAL_DEFAULTS.namespace);
    assert.equal(seen.taskQueue, TEMPORAL_DEFAULTS.taskQueue);
    assert.deepEqual(seen.config, { ...TEMPORAL_DEFAULTS });
    assert.ok(seen.bundle.startsWith(join(homedir(), '.cache', 'agent-sessions')), seen.bundle);
  });

  test('outside the command line and the dev server helpers, no source file reads process.env', () => {
    const offenders: string[] = [];
    const visit = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) visit(path);
        else if (name.endsWith('.ts') && /\bprocess\.env\b/.test(withoutComments(readFileSync(path, 'utf8')))) offenders.push(relative(ROOT, path));
      }
    };
    for (const dir of ['src', 'workflows']) visit(join(ROOT, dir));
    assert.deepEqual(
      offenders.filter((file) => !file.startsWith('src/cli/') && !file.startsWith('src/devserver/')),
      [],
      'only src/cli reads the environment (src/devserver takes an env option for the processes it starts)',
    );
  });
});

describe('release settings', () => {
  test('the deployment defaults to the task queue; flags win over ours, ours over the Worker Controller’s', () => {
    assert.deepEqual(loadSettings({}).release, { deployment: 'agent-sessions' });
    assert.deepEqual(loadSettings({ AGENT_SESSIONS_TASK_QUEUE: 'q1' }).release, { deployment: 'q1' });
    const controller = { TEMPORAL_DEPLOYMENT_NAME: 'ns/agents', TEMPORAL_WORKER_BUILD_ID: 'abc123' };
    assert.deepEqual(loadSettings(controller).release, { deployment: 'ns/agents', buildId: 'abc123' });
    const ours = { ...controller, AGENT_SESSIONS_DEPLOYMENT: 'mine', AGENT_SESSIONS_BUILD_ID: 'b1' };
    assert.deepEqual(loadSettings(ours).release, { deployment: 'mine', buildId: 'b1' });
    assert.deepEqual(loadSettings(ours, { deployment: 'flagged', buildId: 'b2' }).release, { deployment: 'flagged', buildId: 'b2' });
  });

  test('a build id or deployment Temporal would refuse is named by its flag or variable', () => {
    assert.throws(() => loadSettings({ AGENT_SESSIONS_BUILD_ID: 'has space' }), (error: unknown) => {
      assert.ok(error instanceof InvalidSettingError);
      assert.match(error.message, /^AGENT_SESSIONS_BUILD_ID must be 1 to 200 characters with no space, got "has space"/);
      return true;
    });
    assert.throws(() => loadSettings({}, { deployment: 'x'.repeat(201) }), /--deployment must be 1 to 200 characters/);
  });
});

describe('traces', () => {
  test('no OTLP endpoint, no tracing; an endpoint gives the documented defaults', () => {
    assert.equal(load({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }).tracing, undefined);
    const tracing = load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing;
    assert.deepEqual({ ...tracing }, {
      endpoint: 'http://127.0.0.1:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      resourceAttributes: {},
      sampler: { name: 'parentbased_always_on', ratio: 1 },
      captureMessageContent: false,
    });
  });

  test('the signal path is appended to the base endpoint for HTTP, never for gRPC, and never to the traces endpoint', () => {
    assert.equal(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing?.endpoint, 'http://collector:4318/v1/traces');
    assert.equal(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).tracing?.endpoint, 'http://collector:4317');
    const both = load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom' }).tracing;
    assert.equal(both?.endpoint, 'http://b:4318/custom');
    assert.equal(load({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/x', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).tracing?.protocol, 'http/json');
  });

  test('service name, resource attributes, headers, sampler and content capture are read as the specification writes them', () => {
    const tracing = load({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_SERVICE_NAME: 'sessions-eu',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod, team=agents%20core',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=one,x-tenant=t',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=two',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    }).tracing!;
    assert.equal(tracing.serviceName, 'sessions-eu');
    assert.deepEqual(tracing.resourceAttributes, { 'deployment.environment': 'prod', team: 'agents core' });
    assert.deepEqual(tracing.headers, { 'x-api-key': 'two', 'x-tenant': 't' });
    assert.deepEqual(tracing.sampler, { name: 'parentbased_traceidratio', ratio: 0.25 });
    assert.equal(tracing.captureMessageContent, true);
  });

  test('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none switch tracing off; up --traces names its collector whatever they say', () => {
    assert.equal(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).tracing, undefined);
    assert.equal(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing, undefined);
    const jaeger = load({ OTEL_TRACES_EXPORTER: 'none', OTEL_SERVICE_NAME: 'mine' }, { tracesEndpoint: 'http://127.0.0.1:4318' }).tracing;
    assert.equal(jaeger?.endpoint, 'http://127.0.0.1:4318/v1/traces');
    assert.equal(jaeger?.serviceName, 'mine');
  });

  test('a bad value is refused naming the variable and what it accepts', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    assertRefused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'c:4318' }, /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL, e\.g\. http:\/\/127\.0\.0\.1:4318, got "c:4318"$/);
    assertRefused({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://c' }, /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http or https URL/);
    assertRefused({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http' }, 'OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json, grpc, got "http"');
    assertRefused({ ...endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'thrift' }, /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be one of http\/protobuf, http\/json, grpc/);
    assertRefused(
      { ...endpoint, OTEL_TRACES_SAMPLER: 'jaeger_remote' },
      'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio, got "jaeger_remote"',
    );
    assertRefused({ ...endpoint, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, /^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 \(the share of traces kept by traceidratio\), got "1\.5"$/);
    assertRefused({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: 'half' }, /^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/);
    assertRefused({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'team' }, /^OTEL_RESOURCE_ATTRIBUTES must be a comma-separated list of key=value \(values URL-encoded\), got "team"$/);
    assertRefused({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'a=%zz' }, /^OTEL_EXPORTER_OTLP_HEADERS must be a comma-separated list of key=value/);
    assertRefused({ ...endpoint, OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER must be otlp or none, got "zipkin"');
    assertRefused({ ...endpoint, OTEL_SDK_DISABLED: 'yes' }, 'OTEL_SDK_DISABLED must be true or false, got "yes"');
    assertRefused({ ...endpoint, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: '1' }, /^OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT must be true or false/);
    // Refused even without an endpoint: a typo is not silently ignored.
    assertRefused({ OTEL_TRACES_SAMPLER: 'sometimes' }, /^OTEL_TRACES_SAMPLER must be one of/);
  });

  test('AGENT_SESSIONS_TRACE_URL is an http(s) URL with {traceId}', () => {
    assert.equal(load({ AGENT_SESSIONS_TRACE_URL: 'http://127.0.0.1:16686/trace/{traceId}' }).traceUrl, 'http://127.0.0.1:16686/trace/{traceId}');
    assertRefused({ AGENT_SESSIONS_TRACE_URL: 'http://127.0.0.1:16686/trace/' }, /^AGENT_SESSIONS_TRACE_URL must be an http or https URL with \{traceId\} where a trace's id goes/);
    assertRefused({ AGENT_SESSIONS_TRACE_URL: 'javascript:{traceId}' }, /^AGENT_SESSIONS_TRACE_URL must be/);
  });

  test("the exporter's headers (a backend's API key) never appear in the serialized settings", () => {
    const settings = load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s3cret' });
    assert.equal(settings.tracing?.headers['x-api-key'], 's3cret');
    assert.ok(!JSON.stringify(settings).includes('s3cret'));
    assert.ok(!inspect(settings, { depth: 5 }).includes('s3cret'));
  });
});
