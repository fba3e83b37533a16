/**
 * What every measurement shares: one Temporal server, a session worker and a bare-workflow
 * worker (each on its own task queue, each in this process), a client for each, and the
 * calls being compared, written once so every measurement compares the same things.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { isResendableUpdateError, SessionClient, withBusyRetry, type SessionClientOptions } from '../src/client';
import { connectionOptions, loadSettings, type TemporalConfig } from '../src/config';
import { findFreePort, findTemporalCli, startDevServer, startThrowawayCluster, TEMPORAL_SERVER_VERSION } from '../src/devserver';
import type { TodoItem, TodoPolicy, TodoWriteArgs } from '../src/todo';
import type { TodoWriteResult } from '../src/session';
import { openStreamStore, type StreamStore } from '../src/streams';
import { bundleSessionWorkflows, createWorker, type CreateWorkerOptions, type SessionWorker } from '../src/worker';
import { buildIdOfCode } from '../src/worker/build-id';
import { registerVersion } from '../src/worker/version-registration';
import type { DeploymentVersion } from '../src/release/deployment-api';
import { todosQuery, todoWriteUpdate } from '../workflows/messages';
import { BARE_WORKFLOW_TYPE, bareCloseUpdate, echoQuery, noopQuery, noopUpdate, type NoopResult } from './baseline-workflows';

/** The deployment policy of the benchmark's session workers (the stricter one: its validator does one more check). */
export const POLICY: TodoPolicy = { allowParallelInProgress: false };

/** A worker running in this process, and how to stop it. */
export interface RunningWorker {
  stop(): Promise<void>;
}

/** The shared environment of one benchmark run. */
export interface Bench {
  readonly quick: boolean;
  /** The server the run measures: the dev server (SQLite) or the production topology (PostgreSQL and the Temporal server). */
  readonly server: BenchServer;
  readonly address: string;
  readonly namespace: string;
  readonly sessionQueue: string;
  readonly bareQueue: string;
  /** The project's client, on the session task queue (continue-as-new after 500 applied events, the default). */
  readonly sessions: SessionClient;
  /** The Temporal client underneath, for the bare workflow and plain calls. */
  readonly temporal: Client;
  readonly sessionBundle: WorkflowBundle;
  readonly bareBundle: WorkflowBundle;
  /**
   * The Worker Deployment Version the bare workers serve: versioned and PINNED like the session
   * workers (deployment named after the bare task queue, build id from the bare bundle's code),
   * so that what versioning costs falls on both sides of every comparison.
   */
  readonly bareVersion: DeploymentVersion;
  /** The `temporal` binary that runs the local server, when this run started one. */
  readonly cliPath: string | undefined;
  readonly serverVersion: string | undefined;
  /** The stream store of the run (a SQLite file beside the dev server's; the cluster's PostgreSQL database), as `AGENT_SESSIONS_STREAM_STORE` names it, and opened. */
  readonly streamStoreLocation: string;
  readonly streamStore: StreamStore;
  /** A fresh workflow id. */
  id(prefix: string): string;
  /** One line of progress on stderr. */
  progress(message: string): void;
  /** Starts one more session worker and one more bare worker on the same task queues. */
  addWorkers(): Promise<RunningWorker[]>;
  /**
   * A task queue of its own (named from `prefix`) with one session worker on it and a client
   * for it, for a measurement whose sessions must not mix with the others' (a listing counts
   * every session of its queue). `options.worker.agent` gives its worker's agent loop a model
   * (and its settings), `options.worker.tracing` its tracing, `options.worker.tools` the user's
   * own tools, `options.worker.plugins` its plugins (a bench-only bundle), `options.client.plugins` the client's. Closed with the bench, or earlier with `stop`.
   */
  openQueue(prefix: string, options?: QueueOptions): Promise<{ taskQueue: string; sessions: SessionClient; stop(): Promise<void> }>;
  close(): Promise<void>;
}

/** What a queue of its own runs with beyond the defaults: the worker's agent settings, tracing and own tools, the client's plugins. */
export interface QueueOptions {
  worker?: Pick<CreateWorkerOptions, 'agent' | 'tracing' | 'tools' | 'plugins'>;
  client?: Pick<SessionClientOptions, 'plugins'>;
}

/** Which server a run measures; `TEMPORAL_ADDRESS` overrides both with a server already running. */
export type BenchServer = 'dev' | 'cluster';

/**
 * Starts (or reuses, with `TEMPORAL_ADDRESS`) the server, bundles both workflows, starts one
 * worker of each kind and connects the client. `server: 'cluster'` starts the production
 * topology instead of the dev server: a throwaway PostgreSQL and Temporal server, as
 * `agent-sessions cluster` starts them, on free ports (no workers of its own: the bench's run here).
 */
export async function openBench(quick: boolean, progress: (message: string) => void, server: BenchServer = 'dev'): Promise<Bench> {
  let running: { stop(): Promise<void> } | undefined;
  let cliPath: string | undefined;
  let serverVersion: string | undefined;
  const settings = loadSettings(process.env);
  const { addressGiven, ...base } = settings.temporal;
  let address = base.address;
  // Each server streams through its own backend, as `npm test` runs them: a SQLite file on the dev server, PostgreSQL on the cluster.
  let streamStoreLocation = settings.streams.location.startsWith('postgres') ? settings.streams.location : join(mkdtempSync(join(tmpdir(), 'agent-sessions-bench-streams-')), 'streams.sqlite');
  if (addressGiven) {
    progress(`TEMPORAL_ADDRESS is set: measuring the server at ${address}${server === 'cluster' ? ' (--server cluster is ignored)' : ''}`);
  } else if (server === 'cluster') {
    progress(`starting the production topology (PostgreSQL and the Temporal server ${TEMPORAL_SERVER_VERSION}) on free ports for this run…`);
    const cluster = await startThrowawayCluster({ policy: POLICY, workers: 0, httpPort: false, output: devNull() });
    running = cluster;
    address = cluster.address;
    streamStoreLocation = cluster.streamStoreUrl;
    serverVersion = `${TEMPORAL_SERVER_VERSION} (temporal-server; PostgreSQL from ${cluster.postgres.binaries.dir})`;
  } else {
    cliPath = await findTemporalCli();
    progress('TEMPORAL_ADDRESS is not set: starting a dev server (headless, fresh SQLite file) for this run…');
    const dev = await startDevServer({
      port: await findFreePort(),
      uiPort: false,
      stdio: 'ignore',
      dbFile: join(mkdtempSync(join(tmpdir(), 'agent-sessions-bench-')), 'temporal.sqlite'),
    });
    running = dev;
    address = dev.address;
  }
  const run = randomUUID().slice(0, 8);
  const sessionQueue = `bench-sessions-${run}`;
  const bareQueue = `bench-bare-${run}`;
  const config: TemporalConfig = { ...base, address, taskQueue: sessionQueue };
  const workers: RunningWorker[] = [];

  progress('bundling the session and bare workflows…');
  const sessionBundle = await bundleSessionWorkflows(POLICY, { cacheDir: settings.paths.cacheDir });
  const bareBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./baseline-workflows'), logger: quietLogger });

  const streamStore = openStreamStore({ location: streamStoreLocation, poolSize: 20 });
  const startSessionWorker = async (taskQueue = sessionQueue, extra: QueueOptions['worker'] = {}): Promise<RunningWorker> => {
    const worker: SessionWorker = await createWorker({ ...POLICY, ...extra, temporal: { ...config, taskQueue }, cacheDir: settings.paths.cacheDir, streamStore });
    const running = worker.run();
    await worker.registered();
    return {
      async stop() {
        worker.shutdown();
        await running;
      },
    };
  };
  // Like for like: the bare worker is versioned and PINNED as createWorker's session worker is.
  const bareVersion: DeploymentVersion = { deploymentName: bareQueue, buildId: buildIdOfCode(bareBundle.code) };
  const startBareWorker = async (): Promise<RunningWorker> => {
    // Its own connection, as createWorker opens one for each session worker.
    const connection = await NativeConnection.connect(connectionOptions(config));
    const worker = await Worker.create({
      connection,
      namespace: config.namespace,
      taskQueue: bareQueue,
      workflowBundle: bareBundle,
      workerDeploymentOptions: { useWorkerVersioning: true, version: bareVersion, defaultVersioningBehavior: 'PINNED' },
    });
    const running = worker.run().finally(() => connection.close());
    // The version exists once the worker polls; made current as a session worker's first start makes its own.
    await registerVersion(connection.workflowService, config.namespace, bareVersion, worker.options.identity);
    return {
      async stop() {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
      },
    };
  };

  workers.push(await startSessionWorker(), await startBareWorker());
  const sessions = await SessionClient.connect({ ...config, taskQueue: sessionQueue, continueAsNewAfter: 500 });
  const queues: Array<{ stop(): Promise<void> }> = [];
  const info = await sessions.temporal.connection.workflowService.getSystemInfo({}).catch(() => undefined);

  return {
    quick,
    address,
    namespace: config.namespace,
    sessionQueue,
    bareQueue,
    sessions,
    temporal: sessions.temporal,
    sessionBundle,
    bareBundle,
    bareVersion,
    cliPath,
    streamStoreLocation,
    streamStore,
    server: addressGiven ? 'dev' : server,
    serverVersion: serverVersion ?? info?.serverVersion ?? undefined,
    id: (prefix) => `${prefix}-${randomUUID().slice(0, 8)}`,
    progress,
    async addWorkers() {
      const added = [await startSessionWorker(), await startBareWorker()];
      workers.push(...added);
      return added.map((worker) => ({
        async stop() {
          const at = workers.indexOf(worker);
          if (at >= 0) workers.splice(at, 1);
          await worker.stop();
        },
      }));
    },
    async openQueue(prefix, options = {}) {
      const taskQueue = `bench-${prefix}-${run}`;
      const worker = await startSessionWorker(taskQueue, options.worker);
      const client = await SessionClient.connect({ ...config, taskQueue, continueAsNewAfter: 500, ...options.client });
      let stopped: Promise<void> | undefined;
      const queue = {
        taskQueue,
        sessions: client,
        stop: () => (stopped ??= Promise.allSettled([client.closeConnection(), worker.stop()]).then(() => undefined)),
      };
      queues.push(queue);
      return queue;
    },
    async close() {
      await Promise.allSettled(queues.map((queue) => queue.stop()));
      await sessions.closeConnection().catch(() => undefined);
      await Promise.allSettled(workers.map((worker) => worker.stop()));
      await streamStore.close();
      await running?.stop();
    },
  };
}

/** Where the cluster's prefixed process output goes during a run: nowhere (the table is the output). */
function devNull(): NodeJS.WritableStream {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`bare workflow bundler: ${message}\n`),
  error: (message: string) => process.stderr.write(`bare workflow bundler: ${message}\n`),
};

/** The statuses a one-item {@link todoList} takes in turn. */
const ONE_ITEM_CYCLE = ['pending', 'in_progress', 'completed'] as const;

function todoContent(k: number): string {
  return `Step ${k + 1}: check module ${String(k).padStart(3, '0')} of the build pipeline`;
}

/**
 * A valid list of `size` todos for write number `step`: realistic one-line contents (about 45
 * characters), the first items completed, one in progress, the rest pending, moving on with
 * every step so consecutive writes differ, and so that every write changes the counts (one item
 * completes as the next starts) and with them the session's search attributes. A one-item list
 * does the same by taking its item from pending to in_progress to completed and round again:
 * held in progress, its counts would never change, and a write of it would cost less than any
 * other size's (`bytes` takes its constant at one item).
 */
/**
 * Closes sessions and bare workflows (not timed), `lanes` at a time, so finished rounds do not
 * pile up in the workers' caches. Throws when a close failed, unless `tolerate` is set: then it
 * answers how many failed (a load under faults expects some).
 */
export async function closeAll(
  bench: Bench,
  ids: { sessions?: readonly string[]; bare?: readonly string[] },
  options: { lanes?: number; tolerate?: boolean } = {},
): Promise<number> {
  const { lanes = 16, tolerate = false } = options;
  const jobs = [
    ...(ids.sessions ?? []).map((id) => () => bench.sessions.close(id)),
    ...(ids.bare ?? []).map((id) => () => bench.temporal.workflow.getHandle(id).executeUpdate(bareCloseUpdate, { args: [] })),
  ];
  const errors: unknown[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let n = next++; n < jobs.length; n = next++) await jobs[n]!().catch((error: unknown) => void errors.push(error));
  };
  await Promise.all(Array.from({ length: Math.min(lanes, jobs.length) }, lane));
  if (errors.length > 0 && !tolerate) throw new AggregateError(errors, `${errors.length} of ${jobs.length} closes failed`);
  return errors.length;
}

export function todoList(size: number, step: number): TodoWriteArgs {
  if (size === 1) return { todos: [{ content: todoContent(0), status: ONE_ITEM_CYCLE[step % ONE_ITEM_CYCLE.length]! }] };
  const active = step % size;
  const todos: TodoItem[] = [];
  for (let k = 0; k < size; k++) {
    todos.push({
      content: todoContent(k),
      status: k < active ? 'completed' : k === active ? 'in_progress' : 'pending',
    });
  }
  return { todos };
}

/** UTF-8 bytes of the list's JSON (`[...]`, without the `{"todos":…}` wrapper). */
export function listJsonBytes(args: TodoWriteArgs): number {
  return Buffer.byteLength(JSON.stringify(args.todos));
}

/** The calls compared, ours and the bare workflow's, in the two client shapes. */
export function calls(bench: Bench) {
  const { sessions, temporal } = bench;
  return {
    /** The project's library call: update-with-start (USE_EXISTING), busy retry, error translation. */
    oursWithStart: (id: string, args: TodoWriteArgs): Promise<TodoWriteResult> => sessions.todoWrite(id, args),
    /** The same call shape on the bare workflow. */
    bareWithStart: (id: string, args: unknown): Promise<NoopResult> =>
      withBusyRetry(
        () =>
          temporal.workflow.executeUpdateWithStart(noopUpdate, {
            args: [args],
            updateId: randomUUID(),
            startWorkflowOperation: new WithStartWorkflowOperation(BARE_WORKFLOW_TYPE, {
              workflowId: id,
              taskQueue: bench.bareQueue,
              args: [],
              workflowIdReusePolicy: 'REJECT_DUPLICATE',
              workflowIdConflictPolicy: 'USE_EXISTING',
            }),
          }),
        { attempts: 20, retryable: isResendableUpdateError },
      ),
    /** A plain `executeUpdate` of `todo_write` on a running session. */
    oursPlain: (id: string, args: TodoWriteArgs): Promise<TodoWriteResult> =>
      temporal.workflow.getHandle(id).executeUpdate(todoWriteUpdate, { args: [args], updateId: randomUUID() }),
    /** A plain `executeUpdate` of the no-op update. */
    barePlain: (id: string, args?: unknown): Promise<NoopResult> =>
      temporal.workflow.getHandle(id).executeUpdate(noopUpdate, { args: [args ?? null], updateId: randomUUID() }),
    /** The `todos` query through the library (busy retry, error translation). */
    oursTodos: (id: string) => sessions.todos(id),
    /** The `todos` query, plain. */
    oursTodosPlain: (id: string) => temporal.workflow.getHandle(id).query(todosQuery),
    bareNoopQuery: (id: string) => temporal.workflow.getHandle(id).query(noopQuery),
    bareEchoQuery: (id: string) => temporal.workflow.getHandle(id).query(echoQuery),
  };
}

/** Runs `steps` in a rotating order (so neither side always goes first) and times each one. */
export async function interleaved(steps: ReadonlyArray<() => Promise<unknown>>, iteration: number): Promise<number[]> {
  const times = new Array<number>(steps.length).fill(0);
  for (let k = 0; k < steps.length; k++) {
    const index = (k + iteration) % steps.length;
    const start = performance.now();
    await steps[index]!();
    times[index] = performance.now() - start;
  }
  return times;
}

/** What a workflow bundle is made of: its code, its inline source map, and how much of the code is zod. */
export function bundleComposition(code: string): { codeBytes: number; sourceMapBytes: number; zodBytes: number; modules: number } {
  const mapAt = code.indexOf('//# sourceMappingURL');
  const body = mapAt >= 0 ? code.slice(0, mapAt) : code;
  const starts = [...body.matchAll(/^\/\*\*\*\/ "(\.\/[^"]+)"/gm)].map((match) => ({ path: match[1]!, at: match.index }));
  let zodBytes = 0;
  starts.forEach((module, k) => {
    if (module.path.includes('/zod/')) zodBytes += (starts[k + 1]?.at ?? body.length) - module.at;
  });
  return { codeBytes: body.length, sourceMapBytes: code.length - body.length, zodBytes, modules: starts.length };
}

/** `462 KB of zod in 1,061 KB of code` for a note. */
export function describeBundles(bench: Bench): string {
  const ours = bundleComposition(bench.sessionBundle.code);
  const bare = bundleComposition(bench.bareBundle.code);
  const kb = (bytes: number): string => `${Math.round(bytes / 1000).toLocaleString('en-US')} KB`;
  return `the session bundle has ${kb(ours.codeBytes)} of code, ${kb(ours.zodBytes)} of it zod, against ${kb(bare.codeBytes)} for the bare one`;
}
