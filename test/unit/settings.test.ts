import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { inspect } from 'node:util';
import { InvalidSettingError } from '../../src/client/errors';
import { AGENT_DEFAULTS, loadSettings, requirePolicy, TEMPORAL_DEFAULTS, type Settings } from '../../src/config';

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
  assert.deepEqual(settings.paths, { cacheDir: join(homedir(), '.cache', 'agent-sessions'), dataDir: join(CWD, 'data') });
  const { apiKey, ...agent } = settings.agent;
  assert.equal(apiKey(), undefined);
  assert.deepEqual(agent, { model: 'gpt-4o-mini', maxSteps: 25, maxContextChars: 100_000, nudge: true, approveTools: [], stream: true, streamBatchMs: 200 });
});

test('empty and blank variables count as unset, as compose writes them for an unset default', () => {
  const blank = Object.fromEntries(
    ['TEMPORAL_ADDRESS', 'TEMPORAL_TLS', 'ALLOW_PARALLEL_IN_PROGRESS', 'AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER', 'AGENT_SESSIONS_TOKEN', 'OPENAI_BASE_URL', 'AGENT_SESSIONS_NUDGE', 'AGENT_SESSIONS_STREAM', 'AGENT_SESSIONS_WORKSPACE'].map(
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

  test('AGENT_SESSIONS_APPROVE_TOOLS lists tool names OpenAI accepts, once each', () => {
    assert.deepEqual(load({ AGENT_SESSIONS_APPROVE_TOOLS: 'shell, write_file,shell,' }).agent.approveTools, ['shell', 'write_file']);
    assertRefused({ AGENT_SESSIONS_APPROVE_TOOLS: 'shell,rm -rf' }, /^AGENT_SESSIONS_APPROVE_TOOLS must list tool names .* got "rm -rf"$/);
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
