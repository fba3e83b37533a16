/**
 * `npm test`: starts one Temporal server for the whole run, runs every test file with node's
 * test runner against it, stops it, and exits with the runner's code. The first run on a
 * machine builds the Temporal CLI (see docs/local-server.md).
 *
 * `AGENT_SESSIONS_TEST_TARGET` chooses the server:
 *   - `dev` (or unset): the Temporal CLI's dev server (free ports, a fresh SQLite file, no UI)
 *     and every suite below;
 *   - `cluster`: the production topology's server, `startProductionCluster` without its workers
 *     and HTTP service (the tests start their own, as against the dev server) — PostgreSQL and
 *     the Temporal server 1.31.0 on it, on free ports with a fresh data folder — and the
 *     production subset {@link CLUSTER_FILES}, then `test/cluster/` (each file starts clusters
 *     of its own: the start as a user runs it, and the faults). The first run on a machine
 *     builds the server with Go (docs/production.md).
 *
 * The cluster run traces: it starts Arize Phoenix (as `up --traces` does) and gives every test
 * process, and every program they start, its OTLP endpoint (`AGENT_SESSIONS_TEST_TRACING=1` makes
 * the test beds' workers and clients trace too), each stage's spans in a Phoenix project of their
 * own; at the end it checks that Phoenix received the traces of each stage.
 *
 * Arguments, if any, replace the default file list: `npm test -- test/unit/todo-fold.test.ts`.
 * Files under `test/cluster/` run last, one at a time: each brings up whole clusters.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { TEMPORAL_SERVER_VERSION, findFreePort, findPhoenix, findTemporalCli, phoenixSpans, startDevServer, startPhoenix, startThrowawayCluster, type RunningPhoenix } from '../src/devserver';

const ROOT = join(__dirname, '..');
const SUITES = ['test/unit', 'test/integration', 'test/replay', 'test/bad-input', 'test/faults', 'test/browser'];

/** The variable that chooses the server, and its values. */
const TARGET_VARIABLE = 'AGENT_SESSIONS_TEST_TARGET';
type Target = 'dev' | 'cluster';

/** The dashboard's tests in Chromium: run after the other shared-server files, alone. */
const BROWSER_SUITE = 'test/browser';

/** Test files that start whole clusters of their own: run after the others, one at a time. */
const CLUSTER_SUITE = 'test/cluster';

/**
 * The tests that matter for production, run against the cluster too: everything a deployment
 * relies on that crosses the workflow boundary and could behave differently on PostgreSQL and
 * Temporal's full services (persistence, visibility, update dispatch, continue-as-new, namespace
 * registry) than on the dev server's SQLite — writes and rejections (with a foreign client, the
 * `temporal` CLI), the policy change, subagents, continue-as-new, idempotency, the HTTP API and
 * its security, search attributes and the listing (visibility queries, which SQL visibility
 * answers, not the dev server's SQLite), hostile clients, the agent loop, and streaming (through
 * the stream store's PostgreSQL backend, in the cluster's database for it), and sessions served
 * over MCP (an MCP client's writes are the same Updates).
 *
 * Left out, because the server is not what they test: `test/unit` and `test/replay` (no server,
 * or recorded histories replayed in the worker), `test/bad-input` (694 inputs refused by the
 * validator in the worker, the same code whatever the server), `test/browser` (the dashboard),
 * the CLI tests (the CLI is the client library these files already drive), and `test/faults`
 * (they start dev servers of their own to kill them; `test/cluster/faults.test.ts` does the same
 * to the cluster's Temporal server, PostgreSQL and workers).
 */
const CLUSTER_FILES = [
  'test/integration/session.test.ts',
  'test/integration/release.test.ts',
  'test/integration/policy-change.test.ts',
  'test/integration/subagents.test.ts',
  'test/integration/continue-as-new.test.ts',
  'test/integration/idempotency.test.ts',
  'test/integration/http-api.test.ts',
  'test/integration/http-security.test.ts',
  'test/integration/search-attributes.test.ts',
  'test/integration/listing.test.ts',
  'test/integration/hostile-clients.test.ts',
  'test/integration/agent-loop.test.ts',
  'test/integration/streaming.test.ts',
  'test/integration/stream-store.test.ts',
  // The one fault test on the shared server: a worker process killed mid-answer, its words through PostgreSQL.
  'test/faults/stream-worker-kill.test.ts',
  'test/integration/mcp.test.ts',
];

function testFilesIn(dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(join(ROOT, dir))
      .filter((name) => name.endsWith('.test.ts'))
      .sort()
      .map((name) => join(dir, name)),
  );
}

function targetFrom(env: NodeJS.ProcessEnv): Target {
  const value = env[TARGET_VARIABLE] ?? '';
  if (value === '' || value === 'dev') return 'dev';
  if (value === 'cluster') return 'cluster';
  throw new Error(`${TARGET_VARIABLE} must be dev (the default: the Temporal dev server) or cluster (PostgreSQL and the Temporal server), got ${JSON.stringify(value)}`);
}

/** Runs `files` with node's test runner against `env`; resolves with its exit code. */
function runFiles(files: readonly string[], concurrency: number, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise<number>((resolve) => {
    const runner = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files.map((file) => relative(ROOT, join(ROOT, file)))],
      { cwd: ROOT, stdio: 'inherit', env },
    );
    const forward = (signal: NodeJS.Signals): void => void runner.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    runner.once('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

async function main(): Promise<number> {
  let target: Target;
  try {
    target = targetFrom(process.env);
  } catch (error) {
    process.stderr.write(`npm test: ${(error as Error).message}\n`);
    return 2;
  }
  const given = process.argv.length > 2 ? process.argv.slice(2) : undefined;
  const files = given ?? (target === 'cluster' ? [...CLUSTER_FILES, ...testFilesIn([CLUSTER_SUITE])] : testFilesIn(SUITES));
  const inSuite = (suite: string) => (file: string): boolean => relative(join(ROOT, suite), join(ROOT, file)).split(/[\\/]/)[0] !== '..';
  const inClusterSuite = inSuite(CLUSTER_SUITE);
  const inBrowserSuite = inSuite(BROWSER_SUITE);
  const shared = files.filter((file) => !inClusterSuite(file));
  const own = files.filter(inClusterSuite);

  const started = Date.now();
  const cli = await findTemporalCli();
  process.stderr.write(`temporal CLI: ${cli}\n`);
  const output = join(ROOT, 'test-output');
  mkdirSync(output, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_CLI_PATH: cli, TEST_OUTPUT_DIR: output };

  let server: { address: string; stop(): Promise<unknown> } | undefined;
  // Each target streams through its own backend: a SQLite file beside the dev server's, the cluster's PostgreSQL.
  env['AGENT_SESSIONS_STREAM_STORE'] = join(mkdtempSync(join(tmpdir(), 'agent-sessions-tests-streams-')), 'streams.sqlite');
  if (shared.length > 0 && target === 'dev') {
    const dev = await startDevServer({
      port: await findFreePort(),
      temporalCliPath: cli,
      uiPort: false,
      stdio: 'ignore',
      dbFile: join(mkdtempSync(join(tmpdir(), 'agent-sessions-tests-')), 'temporal.sqlite'),
    });
    server = dev;
    process.stderr.write(`Temporal dev server for the tests at ${dev.address} (ready in ${Date.now() - started} ms)\n`);
  } else if (shared.length > 0) {
    const log = join(output, 'cluster-server.log');
    const cluster = await startThrowawayCluster({
      // No worker runs in this cluster (the tests start their own), so no policy is applied; it is required all the same.
      policy: { allowParallelInProgress: true },
      workers: 0,
      httpPort: false,
      output: createWriteStream(log),
    });
    server = cluster;
    env['AGENT_SESSIONS_STREAM_STORE'] = cluster.streamStoreUrl;
    const { binaries, postgres, schemas, temporal, namespace } = cluster.timings;
    process.stderr.write(
      `Temporal cluster for the tests at ${cluster.address}: the Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL, ` +
        `ready in ${Date.now() - started} ms (binaries ${binaries}, PostgreSQL ${postgres}, schemas ${schemas}, server ${temporal}, namespace ${namespace} ms); its output: ${relative(ROOT, log)}\n`,
    );
  }
  if (server) env['TEMPORAL_ADDRESS'] = server.address;
  let phoenix: RunningPhoenix | undefined;
  if (target === 'cluster') {
    phoenix = await startPhoenix({ python: await findPhoenix(), dir: mkdtempSync(join(tmpdir(), 'agent-sessions-tests-phoenix-')), keepsProcessAlive: false });
    Object.assign(env, { OTEL_EXPORTER_OTLP_ENDPOINT: phoenix.otlpHttpUrl, AGENT_SESSIONS_TEST_TRACING: '1' });
    process.stderr.write(`Arize Phoenix for the traces of the cluster run at ${phoenix.uiUrl} (its log: ${phoenix.logFile})\n`);
  }

  let code = 0;
  const testsStarted = Date.now();
  try {
    // Two files at a time, except the browser tests, which run after them on their own: Chromium
    // beside another file's worker loaded CI's 2-core machine past the page's waits.
    const together = shared.filter((file) => !inBrowserSuite(file));
    const alone = shared.filter(inBrowserSuite);
    const sharedEnv = phoenix !== undefined ? inProject(env, TRACED_STAGES.shared.project) : env;
    if (together.length > 0) code = await runFiles(together, 2, sharedEnv);
    if (alone.length > 0) code = Math.max(code, await runFiles(alone, 1, sharedEnv));
  } finally {
    await server?.stop();
  }
  const sharedEnded = Date.now();
  // The shared server is gone by now: these files address the clusters they start themselves.
  const { TEMPORAL_ADDRESS: _stopped, AGENT_SESSIONS_STREAM_STORE: _itsStore, ...ownEnv } = env;
  if (own.length > 0) code = Math.max(code, await runFiles(own, 1, phoenix !== undefined ? inProject(ownEnv, TRACED_STAGES.clusterSuite.project) : ownEnv));
  if (phoenix !== undefined) {
    // The beds' workers and clients trace when shared files ran; the cluster's own workers, when test/cluster/ did.
    const expected = [...(shared.length > 0 ? [TRACED_STAGES.shared] : []), ...(own.length > 0 ? [TRACED_STAGES.clusterSuite] : [])];
    code = Math.max(code, await checkTraced(phoenix, expected));
    await phoenix.stop();
  }
  const seconds = (ms: number): string => `${(ms / 1000).toFixed(0)} s`;
  process.stderr.write(
    `npm test (${TARGET_VARIABLE}=${target}): ${files.length} files in ${seconds(Date.now() - started)} ` +
      `(${seconds(testsStarted - started)} to start the server, ${seconds(sharedEnded - testsStarted)} for ${shared.length} files on it` +
      `${own.length > 0 ? `, ${seconds(Date.now() - sharedEnded)} for ${own.length} under ${CLUSTER_SUITE}/` : ''})\n`,
  );
  return code;
}

/**
 * The stages of the traced cluster run, each with the Phoenix project its spans go to (Phoenix
 * keeps no `service.name`: the project, from the `openinference.project.name` resource attribute,
 * is what tells the senders apart) and the spans that prove its programs traced.
 */
const TRACED_STAGES = {
  /** The shared files: the test beds' workers and clients, in the test processes. */
  shared: { project: 'npm-test-shared', senders: "the test beds' workers and clients", names: [] },
  /**
   * test/cluster/: the clusters' own worker processes, known by spans only a worker makes, that
   * end while the cluster runs (a run's `RunWorkflow` span ends with the run: a session's never
   * does here); the test processes there start no worker of their own.
   */
  clusterSuite: { project: 'npm-test-cluster-suite', senders: "the clusters' workers", names: ['HandleUpdate:todo_write', 'HandleUpdate:user/message', 'RunActivity:callModel'] },
} as const;
type TracedStage = (typeof TRACED_STAGES)[keyof typeof TRACED_STAGES];

/** The environment with its spans put in one Phoenix project (kept beside any resource attributes already set). */
function inProject(env: NodeJS.ProcessEnv, project: string): NodeJS.ProcessEnv {
  const attributes = [env.OTEL_RESOURCE_ATTRIBUTES, `openinference.project.name=${project}`].filter((part) => part !== undefined && part !== '');
  return { ...env, OTEL_RESOURCE_ATTRIBUTES: attributes.join(',') };
}

/** Fails the run (1) unless Phoenix received spans from each of the `expected` stages. */
async function checkTraced(phoenix: RunningPhoenix, expected: readonly TracedStage[]): Promise<number> {
  let code = 0;
  for (const stage of expected) {
    // Phoenix writes what it received in batches: the last test's spans may be a moment behind.
    const deadline = Date.now() + 30_000;
    let found = 0;
    while (found === 0 && Date.now() < deadline) {
      found = (await phoenixSpans(phoenix.uiUrl, stage.project, { names: stage.names, atMost: 1 }).catch(() => [])).length;
      if (found === 0) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    process.stderr.write(`Phoenix ${found > 0 ? 'received' : 'has no'} spans from ${stage.senders} in project ${stage.project}${stage.names.length > 0 ? ` (${stage.names.join(', ')})` : ''}\n`);
    if (found === 0) {
      process.stderr.write(`npm test: the cluster run was to be traced, and Phoenix has no trace from ${stage.senders} (project ${stage.project})\n`);
      code = 1;
    }
  }
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`npm test could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
