/**
 * Streaming: the scripted model writes a 2,000-token answer at a fixed rate, the worker appends
 * its words to the stream store (a SQLite file on the dev server, the cluster's PostgreSQL with
 * `--server cluster`), and readers take them from `GET /sessions/{id}/stream` (the HTTP service in
 * this process, reading the same store).
 *
 * - Temporal's work per turn: the session's history events, its workflow tasks and the worker's
 *   RPCs to the Temporal server (the worker's own `temporal_request` counter, scraped from its
 *   metrics endpoint around each turn) for streamed turns, against the same turns on a worker that
 *   does not stream (`AGENT_SESSIONS_STREAM=false`). Both workers run as `agent-sessions worker`.
 * - First words: for each of those turns, when the first token left the model (its request log,
 *   to the millisecond) against when an SSE reader got it; every event checked to come once, in
 *   offset order, and to make the durable answer.
 * - Load: `todo_write` latency, from this process, on other sessions of a worker while 20 and
 *   while 100 of its sessions stream at once (each with an SSE reader), against the same writes
 *   while nothing streams, blocks alternating in the same run. The worker runs as `agent-sessions
 *   worker`, and the model, the HTTP service and its readers in another process
 *   (`bench/load/stream-load.ts`), which also reports each streamed turn's first words.
 * - Readers: 1,000 SSE readers of one session, each checked to get every event once, in order,
 *   and what they cost the store (its most waits on that session at one time).
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { temporal as proto } from '@temporalio/proto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openSse, readAnswer } from './sse-client';
import { longAnswer, STREAM_LOAD_TASK } from './load/stream-load';
import { cpuBetween, cpuSnapshot, findDevServerPid, processCpuSeconds, type CpuUse } from './load/usage';
import { startHttpServer, type HttpServer } from '../src/http/server';
import { startModelServer, type ModelServer, type ScriptJson } from '../src/model-server';
import { SessionClient } from '../src/client';
import { findFreePort } from '../src/devserver';
import { int, ms, pcts, type MeasurementResult, type Row } from './report';
import { todoList, type Bench } from './setup';
import { summarize, type Summary } from './stats';

/** Tokens per second the model writes at: a fast hosted model's pace (a 2,000-token answer takes 20 s). */
const RATE = 100;
const ANSWER_TOKENS = 2000;
const TOKEN_CHARS = 4;
const FIRST_WORDS_TARGET_MS = 250;
const HISTORY_TOLERANCE = 0.01;
const LOAD_TARGET = 1.1;
/** Sessions streaming at once during the load's blocks. */
const LOADS = [20, 100] as const;
/** SSE readers of one session. */
const CROWD = 1000;

const TASK = STREAM_LOAD_TASK;
/** 2,000 tokens of 4 characters. */
const ANSWER = longAnswer(ANSWER_TOKENS);
const SCRIPT: ScriptJson = { model: 'scripted-stream', conversations: [{ name: 'long', match: { firstUserMessage: `^${TASK}$` }, steps: [{ respond: { content: ANSWER } }] }] };

interface TurnReading {
  /** ms from the model's first token to the reader's first text event. */
  firstWordsMs: number;
  /** Events with an offset, in order, none missing or repeated. */
  ordered: boolean;
  /** The words of the answering call make the whole answer. */
  whole: boolean;
  events: number;
}

/** Sends the task to a session and waits for its turn to end. */
async function turn(sessions: SessionClient, id: string): Promise<void> {
  const sent = await sessions.sendMessage(id, TASK);
  for (;;) {
    const snapshot = await sessions.session(id);
    if (snapshot.agent.lastTurn?.messageId === sent.messageId && snapshot.agent.activity.state === 'idle' && !snapshot.turnOpen) {
      if (snapshot.agent.lastTurn.reason !== 'completed') throw new Error(`the turn of ${id} ended ${snapshot.agent.lastTurn.reason}: ${snapshot.agent.lastTurn.detail ?? ''}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Events that timing alone decides: how events fell into workflow tasks (and the search-attribute upsert each task makes), and when an activity was picked up. */
const TIMING_EVENTS: ReadonlySet<number> = new Set([
  proto.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
  proto.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
  proto.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  proto.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED,
  proto.api.enums.v1.EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
]);

/** What a turn cost Temporal: the session's history events, bytes and own events (those timing does not decide), its workflow tasks, and the worker's RPCs (heartbeats apart). */
interface TurnCost {
  events: number;
  bytes: number;
  own: number;
  workflowTasks: number;
  rpcs: number;
  heartbeats: number;
  byOperation: Record<string, number>;
}

/** A session's history after its turn: its events, its bytes (Temporal's own count), its own events, and its workflow tasks. */
async function historySize(sessions: SessionClient, id: string): Promise<Omit<TurnCost, 'rpcs' | 'heartbeats' | 'byOperation'>> {
  const handle = sessions.temporal.workflow.getHandle(id);
  const description = await handle.describe();
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  const own = events.filter((event) => !TIMING_EVENTS.has(Number(event.eventType))).length;
  const workflowTasks = events.filter((event) => Number(event.eventType) === proto.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length;
  return { events: description.historyLength, bytes: Number(description.raw.workflowExecutionInfo?.historySizeBytes ?? 0), own, workflowTasks };
}

/** A worker process (`agent-sessions worker --metrics-port`) and the RPCs it has made so far, from its metrics. */
interface WorkerProcess {
  pid: number;
  /** RPCs to the Temporal server other than long polls, by operation (core's `temporal_request` counter). */
  rpcs(): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

/** Starts `agent-sessions worker` with `env` (from the sources, as the rest of the bench runs), serving its metrics on a free port. */
async function startWorkerProcess(env: NodeJS.ProcessEnv): Promise<WorkerProcess> {
  const port = await findFreePort();
  const worker = spawn(process.execPath, [join('bin', 'agent-sessions.js'), 'worker', '--allow-parallel-in-progress', 'false', '--metrics-port', String(port)], {
    cwd: join(__dirname, '..'),
    env: { ...env, AGENT_SESSIONS_FROM_SOURCE: '1' },
  });
  let said = '';
  worker.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
  worker.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
  const stop = (): Promise<void> => stopChild(worker);
  for (const deadline = Date.now() + 120_000; !/worker polling/.test(said); ) {
    if (worker.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`a worker of the streaming bench did not start polling: ${said.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    pid: worker.pid!,
    async rpcs() {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const counts = new Map<string, number>();
      for (const line of text.split('\n')) {
        const match = /^temporal_request(?:_total)?\{([^}]*)\}\s+([0-9.e+]+)/.exec(line);
        if (match === null) continue;
        const operation = /operation="([^"]*)"/.exec(match[1]!)?.[1] ?? '?';
        counts.set(operation, (counts.get(operation) ?? 0) + Number(match[2]));
      }
      return counts;
    },
    stop,
  };
}

/**
 * The RPCs made between two counts: all but heartbeats and query answers, and those two apart.
 * Heartbeats follow how long a model call takes, not whether it streams; query answers are the
 * worker answering this benchmark's own polls of the session while it waits for the turn's end.
 */
function rpcsBetween(before: Map<string, number>, after: Map<string, number>): { rpcs: number; heartbeats: number; byOperation: Record<string, number> } {
  let rpcs = 0;
  let heartbeats = 0;
  const byOperation: Record<string, number> = {};
  for (const [operation, count] of after) {
    const made = count - (before.get(operation) ?? 0);
    if (made === 0) continue;
    byOperation[operation] = made;
    if (/Heartbeat/.test(operation)) heartbeats += made;
    else if (operation !== 'RespondQueryTaskCompleted') rpcs += made;
  }
  return { rpcs, heartbeats, byOperation };
}

/** One streamed turn read through the HTTP service: when its first words came, and whether every event came once and in order. */
async function readTurn(http: HttpServer, model: ModelServer, sessions: SessionClient, id: string): Promise<TurnReading> {
  await sessions.start(id);
  const connection = await openSse(`${http.url}/sessions/${encodeURIComponent(id)}/stream`);
  if (connection.status !== 200) throw new Error(`GET /sessions/${id}/stream answered ${connection.status}: ${connection.body ?? ''}`);
  const before = model.requests().length;
  const done = turn(sessions, id);
  const read = await readAnswer(connection);
  await done;
  const request = model.requests().slice(before).find((r) => r.streamed && r.firstTokenAt !== null);
  if (request?.firstTokenAt === undefined || request.firstTokenAt === null || read.firstTextAt === undefined) throw new Error(`turn ${id}: no streamed words were seen`);
  return {
    firstWordsMs: read.firstTextAt - Date.parse(request.firstTokenAt),
    ordered: read.ordered,
    whole: read.answer?.outcome === 'completed' && read.answer.text === ANSWER,
    events: read.offsets.length,
  };
}

/** `todo_write`s one after another on a fresh session until `until` resolves; the latencies, in ms, of those that ended before it did. */
async function writesUntil(sessions: SessionClient, bench: Bench, until: Promise<unknown>): Promise<number[]> {
  let over = false;
  void until.finally(() => (over = true)).catch(() => undefined);
  const times: number[] = [];
  const id = bench.id('stream-w');
  for (let step = 0; !over; step++) {
    const start = performance.now();
    try {
      await sessions.todoWrite(id, todoList(3, step));
    } catch (error) {
      // A write the server refused under load is counted and told, not a reason to stop measuring.
      writeFailures.push(error instanceof Error ? error.message.split('\n')[0]! : String(error));
      continue;
    }
    // A write that ends after the load is over measured a machine that was no longer loaded.
    if (!over) times.push(performance.now() - start);
  }
  return times;
}

/** The writes of {@link writesUntil} that failed, with their first line. */
const writeFailures: string[] = [];

/** The CPU used during one block: the machine's counters, and the cores of the load's two processes. */
interface Usage {
  cpu: CpuUse;
  worker: number | null;
  drivers: number | null;
}

/** Cores busy on average over `blocks`: the server, the worker, the drivers (model, HTTP service, readers), this process (the writing client), the rest of the machine. */
function usageLine(blocks: readonly Usage[]): string {
  const seconds = blocks.reduce((sum, block) => sum + block.cpu.seconds, 0);
  const mean = (pick: (block: Usage) => number | null): string => {
    if (blocks.some((block) => pick(block) === null)) return 'unknown';
    return (blocks.reduce((sum, block) => sum + pick(block)! * block.cpu.seconds, 0) / seconds).toFixed(2);
  };
  const other = (block: Usage): number | null =>
    block.cpu.machine === null || block.worker === null || block.drivers === null
      ? null
      : Math.max(0, block.cpu.machine - block.cpu.worker - (block.cpu.server ?? 0) - block.worker - block.drivers);
  return (
    `${mean((block) => block.cpu.machine)} of ${blocks[0]?.cpu.cores ?? '?'} cores busy over ${seconds.toFixed(0)} s: Temporal server ${mean((block) => block.cpu.server)}, ` +
    `the worker ${mean((block) => block.worker)}, the model, HTTP service and readers ${mean((block) => block.drivers)}, this process (the writing client) ${mean((block) => block.cpu.worker)}, ` +
    `other work on the machine ${mean(other)}`
  );
}

/** The load: the drivers' process (model, HTTP service, readers) and the worker's, on a task queue of their own. */
interface LoadProcesses {
  /** The pids of the drivers' process and of the worker's. */
  drivers: number;
  worker: number;
  sessions: SessionClient;
  turns(count: number): Promise<{ intact: number; of: number; firstWordsMs: number[]; problems: string[] }>;
  stop(): Promise<void>;
}

/**
 * Starts the drivers (`scripts/stream-load.ts`: the streaming model, the HTTP service and its SSE
 * readers) and then `agent-sessions worker` on their model, words written at the default batch interval.
 */
async function startLoadProcesses(bench: Bench, prefix: string): Promise<LoadProcesses> {
  const root = join(__dirname, '..');
  const taskQueue = bench.id(`bench-${prefix}`);
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: bench.address,
    TEMPORAL_NAMESPACE: bench.namespace,
    AGENT_SESSIONS_TASK_QUEUE: taskQueue,
    AGENT_SESSIONS_STREAM_STORE: bench.streamStoreLocation,
    AGENT_SESSIONS_STREAM_POOL: '20',
  };
  const children: ChildProcessWithoutNullStreams[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(children.map(stopChild));
  };
  try {
    const drivers = spawn(process.execPath, ['--import', 'tsx', join('scripts', 'stream-load.ts')], {
      cwd: root,
      env: { ...env, STREAM_LOAD_RATE: String(RATE), STREAM_LOAD_TOKENS: String(ANSWER_TOKENS) },
    });
    children.push(drivers);
    let stderr = '';
    drivers.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = createInterface({ input: drivers.stdout })[Symbol.asyncIterator]();
    const next = async (): Promise<Record<string, unknown>> => {
      for (;;) {
        const line = await lines.next();
        if (line.done === true) throw new Error(`the streaming load process ended: ${stderr.slice(-2000)}`);
        if (line.value.startsWith('{"')) return JSON.parse(line.value) as Record<string, unknown>;
      }
    };
    const model = (await next()).model as string;
    const worker = spawn(process.execPath, [join('bin', 'agent-sessions.js'), 'worker', '--allow-parallel-in-progress', 'false'], {
      cwd: root,
      // From the sources, as the rest of the bench runs: a stale build would measure other code.
      env: { ...env, AGENT_SESSIONS_FROM_SOURCE: '1', OPENAI_BASE_URL: model, AGENT_SESSIONS_MODEL: 'scripted-stream', AGENT_SESSIONS_NUDGE: 'false' },
    });
    children.push(worker);
    let said = '';
    worker.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
    worker.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
    for (const deadline = Date.now() + 120_000; !/worker polling/.test(said); ) {
      if (worker.exitCode !== null || Date.now() > deadline) throw new Error(`the load's worker did not start polling: ${said.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const sessions = await SessionClient.connect({ address: bench.address, namespace: bench.namespace, taskQueue });
    return {
      drivers: drivers.pid!,
      worker: worker.pid!,
      sessions,
      async turns(count) {
        drivers.stdin.write(`${JSON.stringify({ turns: count })}\n`);
        return (await next()).done as { intact: number; of: number; firstWordsMs: number[]; problems: string[] };
      },
      async stop() {
        await sessions.closeConnection();
        drivers.stdin.write(`${JSON.stringify({ stop: true })}\n`);
        await stopAll();
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** What one load phase measured. */
interface LoadFigures {
  streams: number;
  quiet: Summary;
  loaded: Summary;
  firstWords: Summary;
  cpu: { quiet: Usage[]; loaded: Usage[] };
  notes: string[];
}

/**
 * `rounds` times: `todo_write`s on another session for 5 s while nothing streams, then while
 * `streams` sessions stream at once (each with an SSE reader), in the load process.
 */
async function loadPhase(bench: Bench, load: LoadProcesses, streams: number, rounds: number): Promise<LoadFigures> {
  const serverPid = bench.cliPath !== undefined ? findDevServerPid(bench.address) : undefined;
  const quiet: number[] = [];
  const loaded: number[] = [];
  const firstWords: number[] = [];
  const notes: string[] = [];
  const cpu: { quiet: Usage[]; loaded: Usage[] } = { quiet: [], loaded: [] };
  const measured = async <T>(into: Usage[], work: () => Promise<T>): Promise<T> => {
    const seconds = (): { worker: number | undefined; drivers: number | undefined } => ({ worker: processCpuSeconds(load.worker), drivers: processCpuSeconds(load.drivers) });
    const before = { cpu: cpuSnapshot(serverPid), ...seconds() };
    const result = await work();
    const used = cpuBetween(before.cpu, cpuSnapshot(serverPid));
    const after = seconds();
    const cores = (a: number | undefined, b: number | undefined): number | null => (a === undefined || b === undefined ? null : (b - a) / used.seconds);
    into.push({ cpu: used, worker: cores(before.worker, after.worker), drivers: cores(before.drivers, after.drivers) });
    return result;
  };
  for (let round = 0; round < rounds; round++) {
    quiet.push(...(await measured(cpu.quiet, () => writesUntil(load.sessions, bench, new Promise((resolve) => setTimeout(resolve, 5000))))));
    const streaming = load.turns(streams);
    loaded.push(...(await measured(cpu.loaded, () => writesUntil(load.sessions, bench, streaming))));
    const done = await streaming;
    firstWords.push(...done.firstWordsMs);
    if (done.intact !== done.of) notes.push(`${streams} streaming, round ${round + 1}: ${done.of - done.intact} of ${done.of} streamed turns under load did not come whole and in order (${done.problems.join('; ')})`);
  }
  const q = summarize(quiet);
  const l = summarize(loaded);
  notes.push(
    `${streams} turns of ${ANSWER_TOKENS} tokens at ${RATE} tokens/s at once, each with an SSE reader: ${loaded.length} writes under load, ${quiet.length} quiet; p95 ratio ${(l.p95 / q.p95).toFixed(3)}.`,
    `${streams} streaming, CPU while nothing streams: ${usageLine(cpu.quiet)}`,
    `${streams} streaming, CPU while they stream: ${usageLine(cpu.loaded)}`,
  );
  return { streams, quiet: q, loaded: l, firstWords: summarize(firstWords.length > 0 ? firstWords : [Number.NaN]), cpu, notes };
}

/** {@link CROWD} SSE readers of one session while it streams a turn: how many got every event once and in order, and the store's most waits on the session at one time. */
async function crowdPhase(http: HttpServer, bench: Bench, sessions: SessionClient): Promise<{ intact: number; events: number; peakWaits: number; reads: number; refused: string[] }> {
  const id = bench.id('stream-crowd');
  await sessions.start(id);
  const readsBefore = bench.streamStore.stats().reads;
  const connections = await Promise.all(Array.from({ length: CROWD }, () => openSse(`${http.url}/sessions/${encodeURIComponent(id)}/stream`)));
  const refused = [...new Set(connections.filter((connection) => connection.status !== 200).map((connection) => `${connection.status} ${(connection.body ?? '').slice(0, 160)}`))];
  // Every reader is in (its `ready` came) before the turn begins.
  await Promise.all(connections.map((connection) => (connection.status === 200 ? connection.events.next() : undefined)));
  const reads = connections.map((connection) => readAnswer(connection, { timeoutMs: 120_000 }).catch(() => undefined));
  await turn(sessions, id);
  const done = await Promise.all(reads);
  const intact = done.filter((read) => read !== undefined && read.ordered && read.offsets[0] === 0 && read.answer?.outcome === 'completed' && read.answer.text === ANSWER).length;
  const events = Math.max(...done.map((read) => read?.offsets.length ?? 0));
  return { intact, events, peakWaits: bench.streamStore.stats().peakWaits.get(id) ?? 0, reads: bench.streamStore.stats().reads - readsBefore, refused };
}

export async function measureStreaming(bench: Bench): Promise<MeasurementResult> {
  const turns = bench.quick ? 3 : 10;
  const rounds = bench.quick ? 1 : 3;
  const model = await startModelServer({ script: SCRIPT, streaming: { tokensPerSecond: RATE, tokenChars: TOKEN_CHARS } });
  // Same-length names: history bytes hold the task queue's name and the session's id.
  const queues = { on: bench.id('bench-stream-on'), off: bench.id('bench-stream-no') };
  const base = {
    ...process.env,
    TEMPORAL_ADDRESS: bench.address,
    TEMPORAL_NAMESPACE: bench.namespace,
    AGENT_SESSIONS_STREAM_STORE: bench.streamStoreLocation,
    OPENAI_BASE_URL: model.url,
    AGENT_SESSIONS_MODEL: 'scripted-stream',
    AGENT_SESSIONS_NUDGE: 'false',
  };
  const workers: WorkerProcess[] = [];
  const clients: SessionClient[] = [];
  let http: HttpServer | undefined;
  let load: LoadProcesses | undefined;
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    const on = await startWorkerProcess({ ...base, AGENT_SESSIONS_TASK_QUEUE: queues.on, AGENT_SESSIONS_STREAM: 'true' });
    workers.push(on);
    const off = await startWorkerProcess({ ...base, AGENT_SESSIONS_TASK_QUEUE: queues.off, AGENT_SESSIONS_STREAM: 'false' });
    workers.push(off);
    const streamed = await SessionClient.connect({ address: bench.address, namespace: bench.namespace, taskQueue: queues.on });
    clients.push(streamed);
    const plain = await SessionClient.connect({ address: bench.address, namespace: bench.namespace, taskQueue: queues.off });
    clients.push(plain);
    http = await startHttpServer({ client: streamed, port: 0, streamStore: bench.streamStore, deployment: queues.on });

    bench.progress(`streaming: ${turns} turns of ${ANSWER_TOKENS} tokens at ${RATE} tokens/s, read over SSE, and as many not streamed, each worker's RPCs counted…`);
    const readings: TurnReading[] = [];
    const costs: { on: TurnCost[]; off: TurnCost[] } = { on: [], off: [] };
    for (let k = 0; k < turns; k++) {
      const a = bench.id('stream-t');
      const b = bench.id('stream-t');
      let before = await on.rpcs();
      readings.push(await readTurn(http, model, streamed, a));
      // The last of the turn's RPCs (its workflow task's completion) may follow the turn's end by a moment.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const onRpcs = rpcsBetween(before, await on.rpcs());
      before = await off.rpcs();
      await plain.start(b);
      await turn(plain, b);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const offRpcs = rpcsBetween(before, await off.rpcs());
      costs.on.push({ ...(await historySize(streamed, a)), ...onRpcs });
      costs.off.push({ ...(await historySize(plain, b)), ...offRpcs });
    }
    const first = summarize(readings.map((r) => r.firstWordsMs));
    const intact = readings.filter((r) => r.ordered && r.whole).length;
    const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
    const fields: Array<[Exclude<keyof TurnCost, 'byOperation'>, string, number]> = [
      ['events', 'history events', HISTORY_TOLERANCE],
      ['own', "history events that are the session's doing (no workflow-task bookkeeping)", HISTORY_TOLERANCE],
      ['bytes', 'history bytes', HISTORY_TOLERANCE],
      ['workflowTasks', 'workflow tasks', HISTORY_TOLERANCE],
      ['rpcs', "the worker's RPCs to Temporal (heartbeats and answers to the bench's polls apart)", HISTORY_TOLERANCE],
    ];
    for (const [field, what, tolerance] of fields) {
      const ours = mean(costs.on.map((c) => c[field]));
      const baseline = mean(costs.off.map((c) => c[field]));
      rows.push({
        measurement: `Temporal's work per turn, streamed vs not: ${what}`,
        ours: ours.toFixed(1),
        baseline: baseline.toFixed(1),
        ratio: baseline > 0 ? ours / baseline : null,
        target: field === 'rpcs' || field === 'workflowTasks' ? 'zero added' : `within ±${tolerance * 100}%`,
        met: Math.abs(ours / baseline - 1) <= tolerance,
      });
    }
    // Timing alone decides how many workflow tasks a turn takes (how its events fell into tasks), and each task is one RPC:
    // what is left once they are taken apart is the turn's own work.
    const beyond = (c: TurnCost): number => c.rpcs - c.workflowTasks;
    rows.push({
      measurement: "Temporal's work per turn, streamed vs not: the worker's RPCs beyond one per workflow task (what timing does not decide)",
      ours: mean(costs.on.map(beyond)).toFixed(1),
      baseline: mean(costs.off.map(beyond)).toFixed(1),
      ratio: mean(costs.on.map(beyond)) / mean(costs.off.map(beyond)),
      target: 'zero added',
      met: mean(costs.on.map(beyond)) <= mean(costs.off.map(beyond)),
    });
    rows.push({
      measurement: `first words at an SSE reader after the model sent them, one session streaming (${ANSWER_TOKENS}-token answer, ${RATE} tokens/s)`,
      ours: pcts(first),
      baseline: '—',
      ratio: null,
      target: `≤ ${FIRST_WORDS_TARGET_MS} ms p95`,
      met: first.p95 <= FIRST_WORDS_TARGET_MS,
    });
    rows.push({
      measurement: 'turns whose every event came once, in order, and made the answer',
      ours: `${intact} of ${turns}`,
      baseline: `${int(summarize(readings.map((r) => r.events)).p50)} events a turn`,
      ratio: null,
      target: 'all',
      met: intact === turns,
    });

    bench.progress(`streaming: ${CROWD} SSE readers of one session…`);
    const crowd = await crowdPhase(http, bench, streamed);
    rows.push({
      measurement: `${CROWD} SSE readers of one streamed turn: readers that got every event once, in order`,
      ours: `${crowd.intact} of ${CROWD}`,
      baseline: `${crowd.events} events`,
      ratio: null,
      target: 'all',
      met: crowd.intact === CROWD,
    });
    rows.push({
      measurement: `${CROWD} SSE readers of one session: the store's most waits on it at one time (reads of it: ${crowd.reads})`,
      ours: String(crowd.peakWaits),
      baseline: '—',
      ratio: null,
      target: '1',
      met: crowd.peakWaits === 1,
    });

    load = await startLoadProcesses(bench, 'stream-ld');
    const loads: LoadFigures[] = [];
    for (const streams of LOADS) {
      bench.progress(`streaming: todo_write latency on other sessions, quiet and while ${streams} sessions stream (${rounds} rounds; the load in a process of its own)…`);
      const figures = await loadPhase(bench, load, streams, rounds);
      loads.push(figures);
      notes.push(...figures.notes);
      rows.push({
        measurement: `todo_write on other sessions while ${streams} sessions stream, vs quiet`,
        ours: pcts(figures.loaded),
        baseline: pcts(figures.quiet),
        ratio: figures.loaded.p50 / figures.quiet.p50,
        target: `≤ ${LOAD_TARGET}× p50${bench.server === 'cluster' ? '' : ' (the target is the cluster\'s)'}`,
        met: figures.loaded.p50 / figures.quiet.p50 <= LOAD_TARGET,
      });
      rows.push({
        measurement: `first words at an SSE reader after the model sent them, while ${streams} sessions stream`,
        ours: pcts(figures.firstWords),
        baseline: '—',
        ratio: null,
        target: streams === 100 ? `≤ ${FIRST_WORDS_TARGET_MS} ms p95` : '—',
        met: streams === 100 ? figures.firstWords.p95 <= FIRST_WORDS_TARGET_MS : null,
      });
    }
    const list = (h: TurnCost[], field: Exclude<keyof TurnCost, 'byOperation'>): string => h.map((x) => x[field]).join(', ');
    const operations = (h: TurnCost[]): string => {
      const sum: Record<string, number> = {};
      for (const cost of h) for (const [operation, count] of Object.entries(cost.byOperation)) sum[operation] = (sum[operation] ?? 0) + count;
      return Object.entries(sum).map(([operation, count]) => `${operation} ${(count / h.length).toFixed(1)}`).join(', ');
    };
    notes.push(
      `stream store: ${bench.streamStoreLocation.startsWith('postgres') ? 'PostgreSQL (the cluster\'s database for it)' : 'a SQLite file'}.`,
      `first words, one session streaming: p50 ${ms(first.p50)} ms, p95 ${ms(first.p95)} ms, max ${ms(first.max)} ms over ${turns} turns (the model's first token, stamped by the scripted model as it writes it, to the SSE reader's first text event; both in this process).`,
      `per turn, streamed: history events ${list(costs.on, 'events')}; workflow tasks ${list(costs.on, 'workflowTasks')}; RPCs ${list(costs.on, 'rpcs')} (+ heartbeats ${list(costs.on, 'heartbeats')}).`,
      `per turn, not streamed: history events ${list(costs.off, 'events')}; workflow tasks ${list(costs.off, 'workflowTasks')}; RPCs ${list(costs.off, 'rpcs')} (+ heartbeats ${list(costs.off, 'heartbeats')}). Heartbeats follow how long the model call takes (a streamed answer is paced at ${RATE} tokens/s; the scripted model answers an unstreamed request at once), not the streaming: the streamed call heartbeats once a second either way.`,
      `RPCs per turn by operation, streamed: ${operations(costs.on)}; not streamed: ${operations(costs.off)}.`,
      ...(writeFailures.length > 0 ? [`${writeFailures.length} todo_writes of the measuring client failed and were left out: ${[...new Set(writeFailures)].slice(0, 3).join('; ')}`] : []),
      `${CROWD} readers: ${crowd.reads} reads of the store for that session while they read (one feed for all of them)${crowd.refused.length > 0 ? `; answers other than 200: ${crowd.refused.join('; ')}` : ''}.`,
    );
    return {
      name: 'streaming',
      title: `Streaming: the model's words through the stream store to SSE readers (${ANSWER_TOKENS}-token answers at ${RATE} tokens/s)`,
      rows,
      figures: { rate: RATE, answerTokens: ANSWER_TOKENS, store: bench.streamStoreLocation.startsWith('postgres') ? 'postgres' : 'sqlite', firstWordsMs: first, readings, costs, crowd, loads },
      notes,
    };
  } finally {
    await load?.stop();
    await http?.close();
    await Promise.allSettled(clients.map((client) => client.closeConnection()));
    await Promise.allSettled(workers.map((worker) => worker.stop()));
    await model.close();
  }
}

/** Stops a child process: SIGTERM, then SIGKILL if it has not exited 30 s later; at once if it already has. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await gone;
  clearTimeout(timer);
}
