import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { RequestRejectedError, SessionClient, SessionNotFoundError, type SessionClientOptions } from '../src/client';
import type { SessionSnapshot, TurnOutcome } from '../src/session';
import { findFreePort, findTemporalCli, startDevServer, type DevServerHandle } from '../src/devserver';
import { acceptedUpdates, type ExportedHistory } from '../src/history';
import type { HttpAppOptions } from '../src/http/app';
import type { CarriedSample } from '../src/session/carried-check';
import { startHttpServer, type HttpServer } from '../src/http/server';
import { startModelServer, type ModelServer, type ModelServerOptions } from '../src/model-server';
import { todoWriteUpdate } from '../workflows/messages';
import type { RejectionRule, TodoItem, TodoPolicy } from '../src/todo';
import { createWorker, replaySessionHistory, type CreateWorkerOptions, type ReplayReport, type SessionWorker } from '../src/worker';
import { loadSettings } from '../src/config';
import { openStreamStore, type StreamStore } from '../src/streams';
import { startTracing, type Tracing } from '../src/tracing';
import { installRuntimeLogging } from '../src/worker/runtime-logging';

/** Root of the checkout, for running the CLI. */
export const ROOT = join(__dirname, '..');

installRuntimeLogging('ERROR');

let ownServer: Promise<DevServerHandle> | undefined;

/**
 * The Temporal server the tests use: `TEMPORAL_ADDRESS` (set by `npm test`'s runner), else a
 * dev server this test process starts for itself on free ports and kills when it exits.
 */
export async function temporalAddress(): Promise<string> {
  const given = process.env.TEMPORAL_ADDRESS;
  if (given !== undefined && given !== '') return given;
  ownServer ??= (async () => {
    const port = await findFreePort();
    const server = await startDevServer({
      port,
      uiPort: false,
      stdio: 'ignore',
      dbFile: join(mkdtempSync(join(tmpdir(), 'agent-sessions-test-')), 'temporal.sqlite'),
      // A test file run alone must exit when its tests end: the server is killed with it.
      keepsProcessAlive: false,
    });
    process.once('exit', () => {
      if (server.pid !== undefined) process.kill(server.pid, 'SIGKILL');
    });
    return server;
  })();
  return (await ownServer).address;
}

// Every program a test starts (a worker process, `chat`) writes and reads the store the test reads.
if ((process.env.AGENT_SESSIONS_STREAM_STORE ?? '') === '') {
  process.env.AGENT_SESSIONS_STREAM_STORE = join(mkdtempSync(join(tmpdir(), 'agent-sessions-test-streams-')), 'streams.sqlite');
}

let streamStore: StreamStore | undefined;

/**
 * The stream store of this test process, shared by its workers and HTTP services:
 * `AGENT_SESSIONS_STREAM_STORE` (set by `npm test`'s runner: a SQLite file on the dev target, the
 * cluster's PostgreSQL database on the cluster target), else a SQLite file of its own, which this
 * module names in that variable when it loads, so the programs a test starts (`chat`, workers) use it too.
 */
export function testStreamStore(): StreamStore {
  streamStore ??= openStreamStore({ location: process.env.AGENT_SESSIONS_STREAM_STORE!, poolSize: 20 });
  return streamStore;
}

// A PostgreSQL store's pool and LISTEN connection would keep the test process from exiting.
after(() => streamStore?.close());

/** Whether the test process's stream store is PostgreSQL (the cluster target) rather than a SQLite file. */
export function streamStoreIsPostgres(): boolean {
  return /^postgres(ql)?:\/\//.test(process.env.AGENT_SESSIONS_STREAM_STORE ?? '');
}

let runTracing: Promise<Tracing | undefined> | undefined;

/**
 * The tracer of this test process when the runner asks for traces (`AGENT_SESSIONS_TEST_TRACING=1`
 * with the `OTEL_*` variables, as the cluster run sets them: a Phoenix of its own), else none.
 * Workers and clients of the test beds then trace unless a test gives its own tracer.
 */
export function runnerTracing(): Promise<Tracing | undefined> {
  runTracing ??= (async () => {
    const tracing = process.env.AGENT_SESSIONS_TEST_TRACING === '1' ? loadSettings(process.env).tracing : undefined;
    return tracing !== undefined ? startTracing(tracing, { serviceName: 'agent-sessions-tests' }) : undefined;
  })();
  return runTracing;
}

/** How {@link until} checks. */
export interface UntilOptions {
  /** The pause between checks; 100 ms unless told. */
  everyMs?: number;
  /** Whether a check that throws counts as "not yet" (a server still coming back) rather than failing at once. */
  ignoreErrors?: boolean;
}

/**
 * Waits, checking every 100 ms (or `everyMs`), until `check` answers something other than
 * undefined; fails naming `what` and how long it waited after `ms`.
 */
export async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 30_000, options: UntilOptions = {}): Promise<T> {
  const { everyMs = 100, ignoreErrors = false } = options;
  const deadline = Date.now() + ms;
  for (;;) {
    const found = ignoreErrors ? await Promise.resolve().then(check).catch(() => undefined) : await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${ms} ms)`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Polls the session until `done` holds, and answers the snapshot that held. A session not created
 * yet (its first message still on the way) is not there yet; any other error fails at once.
 * Fails after `timeoutMs` with the last snapshot's agent status, and what `explain` adds (the
 * output of the workers a fault test started).
 */
export async function waitForSession(
  client: SessionClient,
  sessionId: string,
  done: (s: SessionSnapshot) => boolean,
  timeoutMs = 60_000,
  explain: () => string = () => '',
): Promise<SessionSnapshot> {
  const deadline = Date.now() + timeoutMs;
  let last: SessionSnapshot | undefined;
  while (Date.now() < deadline) {
    last = await client.session(sessionId).catch((error: unknown) => {
      if (error instanceof SessionNotFoundError) return undefined;
      throw error;
    });
    if (last !== undefined && done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`session ${sessionId} did not get there in ${timeoutMs} ms; last seen: ${JSON.stringify(last?.agent)}${explain()}`);
}

/**
 * Waits for the turn of message `messageId` to end (the loop idle again, and the `turn/end` its
 * last activity sent applied) and answers how it ended.
 */
export async function turnOf(client: SessionClient, sessionId: string, messageId: number, timeoutMs = 60_000, explain?: () => string): Promise<TurnOutcome> {
  const ended = await waitForSession(client, sessionId, (s) => s.agent.lastTurn?.messageId === messageId && s.agent.activity.state === 'idle' && !s.turnOpen, timeoutMs, explain);
  return ended.agent.lastTurn!;
}

/** A fresh id for a session or task queue, so test files never see each other's state. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A running worker started for a test, and how to stop it. */
export interface TestWorker {
  sessionWorker: SessionWorker;
  running: Promise<void>;
  stop(): Promise<void>;
}

/** Settings of a test worker beyond its policy and task queue. */
export interface TestWorkerOptions {
  maxCachedWorkflows?: number;
  agent?: CreateWorkerOptions['agent'];
  deployment?: CreateWorkerOptions['deployment'];
  /** The registry the agent loop's activities count into. */
  metrics?: CreateWorkerOptions['metrics'];
  /** Temporal's worker options beyond those (interceptors, …). */
  workerOptions?: CreateWorkerOptions['workerOptions'];
  /** Traces (`startTracing(…).worker`). */
  tracing?: CreateWorkerOptions['tracing'];
  /** Where the model's words go (default: {@link testStreamStore}). */
  streamStore?: CreateWorkerOptions['streamStore'];
}

/**
 * A session whose first workflow task carries a `turn/start` Signal and a `todo_write` Update
 * (`plan`, completed): started with no worker polling `taskQueue`, both sent while it waits, then
 * `waitMs` for the update to reach the server beside the signal before a worker (policy false)
 * starts. Answers the write's receipt and the worker, which the caller stops.
 */
export async function firstTaskWithSignalAndUpdate(client: SessionClient, id: string, taskQueue: string, waitMs = 500) {
  await client.start(id);
  await client.turnStart(id);
  const write = client.todoWrite(id, { todos: [todo('plan', 'completed')] });
  // If the update came later than the worker, it would land in a task of its own and prove less.
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  const worker = await startWorker({ allowParallelInProgress: false }, taskQueue);
  return { written: await write.catch(async (error: unknown) => { await worker.stop(); throw error; }), worker };
}

/**
 * Starts a session worker on `taskQueue` under `policy` against the test server; `agent` holds
 * the agent loop's settings (a scripted model's URL, limits, approvals, workspace). Stopping it
 * twice stops it once.
 */
export async function startWorker(policy: TodoPolicy, taskQueue: string, options: TestWorkerOptions = {}): Promise<TestWorker> {
  const tracing = options.tracing ?? (await runnerTracing())?.worker;
  const sessionWorker = await createWorker({
    ...policy,
    temporal: { address: await temporalAddress(), taskQueue },
    ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
    ...(options.deployment !== undefined ? { deployment: options.deployment } : {}),
    ...(options.metrics !== undefined ? { metrics: options.metrics } : {}),
    ...(options.workerOptions !== undefined ? { workerOptions: options.workerOptions } : {}),
    ...(tracing !== undefined ? { tracing } : {}),
    streamStore: options.streamStore ?? testStreamStore(),
  });
  const running = sessionWorker.run();
  // Until its version is current, no session task reaches it.
  await sessionWorker.registered();
  let stopped: Promise<void> | undefined;
  return {
    sessionWorker,
    running,
    stop() {
      stopped ??= (async () => {
        sessionWorker.shutdown();
        await running;
      })();
      return stopped;
    },
  };
}

/** Replays a session's exported history against the current workflow code under `policy`. */
export async function replaySession(client: SessionClient, sessionId: string, policy: TodoPolicy): Promise<ReplayReport> {
  return replaySessionHistory(await client.exportHistory(sessionId), policy, sessionId);
}

/** A client on the test server and `taskQueue`, with `options` (`continueAsNewAfter`, `diagnoseAfterMs`). */
export async function connectClient(taskQueue: string, options: Omit<SessionClientOptions, 'address' | 'taskQueue'> = {}): Promise<SessionClient> {
  const tracing = options.plugins === undefined ? await runnerTracing() : undefined;
  return SessionClient.connect({ address: await temporalAddress(), taskQueue, ...(tracing !== undefined ? { plugins: [tracing.clientPlugin] } : {}), ...options });
}

/** What a test bed starts beside its worker and client, and how. */
export interface TestBedOptions {
  /** The worker's settings; with `model`, its agent loop's `baseUrl` is the model's. */
  worker?: TestWorkerOptions;
  /** The client's settings. */
  client?: Omit<SessionClientOptions, 'address' | 'taskQueue'>;
  /** A scripted model to start first, for the worker's agent loop: the bed's `model`. */
  model?: ModelServerOptions;
  /** The HTTP service to start last, on the client and a free port unless `port` says: the bed's `http`. */
  http?: Omit<HttpAppOptions, 'client'> & { port?: number; host?: string };
}

/**
 * A worker and a client on a fresh task queue, with the scripted `model` and the `http` service
 * when the options `O` ask for them. A test that restarts the worker puts the new one in `worker`,
 * so the teardown stops that one.
 */
export type TestBed<O extends TestBedOptions = TestBedOptions> = {
  readonly taskQueue: string;
  /**
   * Settles once the bed has started (or failed to). node:test runs a file's top-level `before`
   * hooks all at once, not one after the other, so a top-level hook of the file's own that needs
   * the bed awaits this first.
   */
  readonly ready: Promise<void>;
  worker: TestWorker;
  client: SessionClient;
} & (O extends { model: object } ? { model: ModelServer } : unknown) &
  (O extends { http: object } ? { http: HttpServer } : unknown);

/** A test bed while it is being started or stopped: what has started so far. */
interface PartialTestBed {
  taskQueue: string;
  ready: Promise<void>;
  model?: ModelServer;
  worker?: TestWorker;
  client?: SessionClient;
  http?: HttpServer;
}

async function openTestBed(bed: PartialTestBed, policy: TodoPolicy, options: TestBedOptions): Promise<void> {
  if (options.model !== undefined) bed.model = await startModelServer(options.model);
  const agent = bed.model !== undefined ? { ...options.worker?.agent, baseUrl: bed.model.url } : options.worker?.agent;
  bed.worker = await startWorker(policy, bed.taskQueue, { ...options.worker, ...(agent !== undefined ? { agent } : {}) });
  bed.client = await connectClient(bed.taskQueue, options.client);
  const tracing = await runnerTracing();
  if (options.http !== undefined) bed.http = await startHttpServer({ port: 0, streamStore: testStreamStore(), ...(tracing !== undefined ? { tracing } : {}), ...options.http, client: bed.client });
}

/** Stops what has started, the last first. */
async function closeTestBed(bed: PartialTestBed): Promise<void> {
  await bed.http?.close();
  await bed.client?.closeConnection();
  await bed.worker?.stop();
  await bed.model?.close();
}

/**
 * The usual setup of a test file (or of the `describe` it is called in): registers a `before`
 * hook that starts a test bed on a fresh task queue named after `prefix` (the scripted model,
 * the worker under `policy`, the client, the HTTP service) and an `after` hook that stops it.
 * Returns the bed at once, with only `taskQueue` and `ready` set: the rest is set by the time
 * tests run, so read it inside tests and hooks (a top-level `before` hook after `await bed.ready`),
 * not when the file loads.
 *
 * @example
 * const bed = useTestBed('session-test', { allowParallelInProgress: false });
 * test('a write', async () => { await bed.client.todoWrite(uniqueId('s'), { todos: [todo('A')] }); });
 */
export function useTestBed<O extends TestBedOptions = TestBedOptions>(prefix: string, policy: TodoPolicy, options?: O): TestBed<O> {
  let opened: (opening: Promise<void>) => void = () => undefined;
  const ready = new Promise<void>((resolve) => (opened = resolve));
  // A failure to start is the `before` hook's to report; `ready` only says it is over.
  const bed: PartialTestBed = { taskQueue: uniqueId(prefix), ready: ready.catch(() => undefined) };
  before(() => {
    const opening = openTestBed(bed, policy, options ?? {});
    opened(opening);
    return opening;
  });
  after(() => closeTestBed(bed));
  return bed as TestBed<O>;
}

/** Starts a test bed (as {@link useTestBed} does) inside a test; `close()` stops it. */
export async function startTestBed<O extends TestBedOptions = TestBedOptions>(
  prefix: string,
  policy: TodoPolicy,
  options?: O,
): Promise<TestBed<O> & { close(): Promise<void> }> {
  const bed: PartialTestBed = { taskQueue: uniqueId(prefix), ready: Promise.resolve() };
  try {
    await openTestBed(bed, policy, options ?? {});
  } catch (error) {
    await closeTestBed(bed);
    throw error;
  }
  return Object.assign(bed as TestBed<O>, { close: () => closeTestBed(bed) });
}

/**
 * Asserts that a write (or a spawn) was refused under `rule`, with a message matching `pattern`
 * if given; `kind` is the error class expected (by default any refusal).
 */
export async function assertRejected<E extends RequestRejectedError = RequestRejectedError>(
  write: Promise<unknown>,
  rule: RejectionRule,
  pattern?: RegExp,
  kind: abstract new (...args: never[]) => E = RequestRejectedError as never,
): Promise<E> {
  try {
    await write;
  } catch (error) {
    assert.ok(error instanceof kind, `expected ${kind.name}, got ${String(error)}`);
    assert.equal(error.rule, rule, error.message);
    if (pattern !== undefined) assert.match(error.message, pattern);
    return error;
  }
  assert.fail(`expected the write to be rejected under ${rule}, but it was accepted`);
}

/** How many updates named `name` a history (every run of it) holds as accepted. */
export function countAcceptedUpdates(history: ExportedHistory, name: string = todoWriteUpdate.name): number {
  return acceptedUpdates(history, name).length;
}

/** Shorthand for a todo. */
export function todo(content: string, status: TodoItem['status'] = 'pending'): TodoItem {
  return { content, status };
}

/** What a finished process printed. */
export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `agent-sessions <args>` as a user would, against the test server. */
export async function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<ProcessResult> {
  const env = { ...process.env, TEMPORAL_ADDRESS: await temporalAddress(), ...options.env };
  return runProcess(process.execPath, [join(ROOT, 'bin', 'agent-sessions.js'), ...args], env, options.input);
}

/** Runs the `temporal` CLI (a foreign client) against the test server. */
export async function runTemporalCli(args: string[]): Promise<ProcessResult> {
  const binary = await findTemporalCli();
  return runProcess(binary, [...args, '--address', await temporalAddress()], process.env);
}

function runProcess(command: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') return reject(error);
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}

/** Spawns a long-running CLI command (a worker) and returns it, with its output collected. */
export async function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'agent-sessions.js'), ...args], {
    env: { ...process.env, TEMPORAL_ADDRESS: await temporalAddress(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** What one HTTP request to the service answered, and how long it took. */
export interface HttpAnswer {
  request: string;
  status: number;
  json: any;
  headers: Headers;
  ms: number;
}

/**
 * One JSON request to the HTTP service at `base`. A string body is sent as is (to test
 * malformed bodies); anything else as JSON. A body that is not JSON comes back as text.
 */
export async function httpCall(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const started = Date.now();
  const response = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { request: `${method} ${path}`, status: response.status, json, headers: response.headers, ms: Date.now() - started };
}

/** Every recorded release's carried inputs (test/fixtures/carried/*.json, see test/recording/record-carried.ts), by file. */
export function recordedCarriedSamples(): Array<[file: string, samples: CarriedSample[]]> {
  const folder = join(__dirname, 'fixtures', 'carried');
  return readdirSync(folder)
    .filter((file) => file.endsWith('.json'))
    .map((file) => [file, JSON.parse(readFileSync(join(folder, file), 'utf8')) as CarriedSample[]]);
}

/** One sample of a Prometheus text exposition: `name{labels} value`. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments and HELP/TYPE lines skipped). */
export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = JSON.parse(`"${value!}"`) as string;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples named `name`, as `{ labels, value }` sorted by their labels, to compare whole. */
export function metricSeries(samples: MetricSample[], name: string): Array<{ labels: Record<string, string>; value: number }> {
  return samples
    .filter((sample) => sample.name === name)
    .map(({ labels, value }) => ({ labels, value }))
    .sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)));
}
