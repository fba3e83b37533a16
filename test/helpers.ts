import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RequestRejectedError, SessionClient } from '../src/client';
import { findFreePort, findTemporalCli, startDevServer, type DevServerHandle } from '../src/devserver';
import { acceptedUpdates, type ExportedHistory } from '../src/history';
import { todoWriteUpdate } from '../workflows/messages';
import type { RejectionRule, TodoItem, TodoPolicy } from '../src/todo';
import { createWorker, replaySessionHistory, type CreateWorkerOptions, type ReplayReport, type SessionWorker } from '../src/worker';
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
    });
    process.once('exit', () => {
      if (server.pid !== undefined) process.kill(server.pid, 'SIGKILL');
    });
    return server;
  })();
  return (await ownServer).address;
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

/**
 * Starts a session worker on `taskQueue` under `policy` against the test server; `agent` holds
 * the agent loop's settings (a scripted model's URL, limits, approvals, workspace).
 */
export async function startWorker(
  policy: TodoPolicy,
  taskQueue: string,
  options: { maxCachedWorkflows?: number; agent?: CreateWorkerOptions['agent'] } = {},
): Promise<TestWorker> {
  const sessionWorker = await createWorker({
    ...policy,
    temporal: { address: await temporalAddress(), taskQueue },
    ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
  });
  const running = sessionWorker.run();
  return {
    sessionWorker,
    running,
    async stop() {
      sessionWorker.shutdown();
      await running;
    },
  };
}

/** Replays a session's exported history against the current workflow code under `policy`. */
export async function replaySession(client: SessionClient, sessionId: string, policy: TodoPolicy): Promise<ReplayReport> {
  return replaySessionHistory(await client.exportHistory(sessionId), policy, sessionId);
}

/** A client on the test server and `taskQueue`. */
export async function connectClient(taskQueue: string): Promise<SessionClient> {
  return SessionClient.connect({ address: await temporalAddress(), taskQueue });
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
