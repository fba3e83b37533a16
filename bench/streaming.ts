/**
 * Streaming: the scripted model writes a 2,000-token answer at a fixed rate, the worker streams
 * it to the session's companion stream, and readers take it from `GET /sessions/{id}/stream`
 * (the HTTP service in this process, on its own client).
 *
 * - First words: for each turn, when the first token left the model (its request log, to the
 *   millisecond) against when an SSE reader got it; every event of the turn checked to come once,
 *   in offset order, and to make the durable answer.
 * - History: the session's history events and bytes (Temporal's own count) per turn, for the
 *   streamed turns above, against the same turns on a worker that does not stream
 *   (`AGENT_SESSIONS_STREAM=false`), sessions and task queues named to the same length.
 * - Load: `todo_write` latency, from this process, on other sessions of a worker while 20 of its
 *   sessions stream at once (each with an SSE reader), against the same writes while nothing
 *   streams, blocks alternating in the same run. The worker runs as `agent-sessions worker`, and the
 *   model, the HTTP service and its readers in another process (`bench/load/stream-load.ts`), as a
 *   deployment runs them apart from each other and from its clients. Measured at the default
 *   batch interval (the target) and at 1,000 ms, to show how the cost follows the number of batches.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { temporal as proto } from '@temporalio/proto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openSse, readAnswer } from './sse-client';
import { longAnswer, STREAM_LOAD_TASK } from './load/stream-load';
import { cpuBetween, cpuSnapshot, findDevServerPid, processCpuSeconds, type CpuUse } from './load/usage';
import { startHttpServer, type HttpServer } from '../src/http/server';
import { startModelServer, type ModelServer, type ScriptJson } from '../src/model-server';
import { DEFAULT_STREAM_BATCH_MS, SessionClient } from '../src/client';
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
const STREAMS_AT_ONCE = 20;
/** A batch interval five times the default's, to show what the load costs per batch. */
const WIDE_BATCH_MS = 1000;

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

/** A session's history after its turn: its events, its bytes (Temporal's own count), and its own events (those timing does not decide). */
async function historySize(sessions: SessionClient, id: string): Promise<{ events: number; bytes: number; own: number }> {
  const handle = sessions.temporal.workflow.getHandle(id);
  const description = await handle.describe();
  const history = await handle.fetchHistory();
  const own = (history.events ?? []).filter((event) => !TIMING_EVENTS.has(Number(event.eventType))).length;
  return { events: description.historyLength, bytes: Number(description.raw.workflowExecutionInfo?.historySizeBytes ?? 0), own };
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
    await sessions.todoWrite(id, todoList(3, step));
    // A write that ends after the load is over measured a machine that was no longer loaded.
    if (!over) times.push(performance.now() - start);
  }
  return times;
}

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
  turns(count: number): Promise<{ intact: number; of: number }>;
  stop(): Promise<void>;
}

/**
 * Starts the drivers (`scripts/stream-load.ts`: the streaming model, the HTTP service and its SSE
 * readers) and then `agent-sessions worker` on their model, words sent every `batchMs`.
 */
async function startLoadProcesses(bench: Bench, prefix: string, batchMs: number): Promise<LoadProcesses> {
  const root = join(__dirname, '..');
  const taskQueue = bench.id(`bench-${prefix}`);
  const env = { ...process.env, TEMPORAL_ADDRESS: bench.address, TEMPORAL_NAMESPACE: bench.namespace, AGENT_SESSIONS_TASK_QUEUE: taskQueue };
  const children: ChildProcessWithoutNullStreams[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await gone;
        clearTimeout(timer);
      }),
    );
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
      env: { ...env, AGENT_SESSIONS_FROM_SOURCE: '1', OPENAI_BASE_URL: model, AGENT_SESSIONS_MODEL: 'scripted-stream', AGENT_SESSIONS_NUDGE: 'false', AGENT_SESSIONS_STREAM_BATCH_MS: String(batchMs) },
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
        return (await next()).done as { intact: number; of: number };
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
  batchMs: number;
  quiet: Summary;
  loaded: Summary;
  cpu: { quiet: Usage[]; loaded: Usage[] };
  notes: string[];
}

/**
 * `rounds` times: `todo_write`s on another session for 5 s while nothing streams, then while
 * {@link STREAMS_AT_ONCE} sessions stream at once (each with an SSE reader), in a load process
 * whose worker sends words every `batchMs`.
 */
async function loadPhase(bench: Bench, batchMs: number, rounds: number): Promise<LoadFigures> {
  const load = await startLoadProcesses(bench, 'stream-ld', batchMs);
  const serverPid = bench.cliPath !== undefined ? findDevServerPid(bench.address) : undefined;
  const quiet: number[] = [];
  const loaded: number[] = [];
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
  try {
    for (let round = 0; round < rounds; round++) {
      quiet.push(...(await measured(cpu.quiet, () => writesUntil(load.sessions, bench, new Promise((resolve) => setTimeout(resolve, 5000))))));
      const streaming = load.turns(STREAMS_AT_ONCE);
      loaded.push(...(await measured(cpu.loaded, () => writesUntil(load.sessions, bench, streaming))));
      const { intact, of } = await streaming;
      if (intact !== of) notes.push(`words every ${batchMs} ms, round ${round + 1}: ${of - intact} of ${of} streamed turns under load did not come whole and in order`);
    }
  } finally {
    await load.stop();
  }
  const q = summarize(quiet);
  const l = summarize(loaded);
  notes.push(
    `words every ${batchMs} ms: ${STREAMS_AT_ONCE} turns of ${ANSWER_TOKENS} tokens at ${RATE} tokens/s at once, each with an SSE reader; ${loaded.length} writes under load, ${quiet.length} quiet; p95 ratio ${(l.p95 / q.p95).toFixed(3)}.`,
    `words every ${batchMs} ms, CPU while nothing streams: ${usageLine(cpu.quiet)}`,
    `words every ${batchMs} ms, CPU while ${STREAMS_AT_ONCE} sessions stream: ${usageLine(cpu.loaded)}`,
  );
  return { batchMs, quiet: q, loaded: l, cpu, notes };
}

export async function measureStreaming(bench: Bench): Promise<MeasurementResult> {
  const turns = bench.quick ? 3 : 20;
  const rounds = bench.quick ? 1 : 3;
  const model = await startModelServer({ script: SCRIPT, streaming: { tokensPerSecond: RATE, tokenChars: TOKEN_CHARS } });
  const agent = { baseUrl: model.url, apiKey: () => undefined, model: 'scripted-stream', nudge: false };
  // Same-length names: history bytes hold the task queue's name and the session's id.
  const streamed = await bench.openQueue('stream-on', { worker: { agent: { ...agent, stream: true } } });
  const plain = await bench.openQueue('stream-no', { worker: { agent: { ...agent, stream: false } } });
  const http = await startHttpServer({ client: streamed.sessions, port: 0 });
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    bench.progress(`streaming: ${turns} turns of ${ANSWER_TOKENS} tokens at ${RATE} tokens/s, read over SSE, and as many not streamed…`);
    const readings: TurnReading[] = [];
    const on: Array<{ events: number; bytes: number; own: number }> = [];
    const off: Array<{ events: number; bytes: number; own: number }> = [];
    for (let k = 0; k < turns; k++) {
      const a = bench.id('stream-t');
      const b = bench.id('stream-t');
      readings.push(await readTurn(http, model, streamed.sessions, a));
      await plain.sessions.start(b);
      await turn(plain.sessions, b);
      on.push(await historySize(streamed.sessions, a));
      off.push(await historySize(plain.sessions, b));
    }
    const first = summarize(readings.map((r) => r.firstWordsMs));
    const intact = readings.filter((r) => r.ordered && r.whole).length;
    rows.push({
      measurement: `first words at an SSE reader after the model sent them (${ANSWER_TOKENS}-token answer, ${RATE} tokens/s)`,
      ours: pcts(first),
      baseline: '—',
      ratio: null,
      target: `≤ ${FIRST_WORDS_TARGET_MS} ms p50 and p95`,
      met: first.p50 <= FIRST_WORDS_TARGET_MS && first.p95 <= FIRST_WORDS_TARGET_MS,
    });
    rows.push({
      measurement: 'turns whose every event came once, in order, and made the answer',
      ours: `${intact} of ${turns}`,
      baseline: `${int(summarize(readings.map((r) => r.events)).p50)} events a turn`,
      ratio: null,
      target: 'all',
      met: intact === turns,
    });
    const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
    for (const field of ['events', 'own', 'bytes'] as const) {
      const ours = mean(on.map((h) => h[field]));
      const base = mean(off.map((h) => h[field]));
      const what = field === 'own' ? "events that are the session's doing (no workflow-task bookkeeping)" : field;
      rows.push({
        measurement: `the session's history ${what} per turn, streamed vs not streamed`,
        ours: int(ours),
        baseline: int(base),
        ratio: ours / base,
        target: `within ±${HISTORY_TOLERANCE * 100}%`,
        met: Math.abs(ours / base - 1) <= HISTORY_TOLERANCE,
      });
    }

    const loads: LoadFigures[] = [];
    for (const batchMs of [DEFAULT_STREAM_BATCH_MS, WIDE_BATCH_MS]) {
      bench.progress(`streaming: todo_write latency on other sessions, quiet and while ${STREAMS_AT_ONCE} sessions stream, words sent every ${batchMs} ms (${rounds} rounds; the load in a process of its own)…`);
      const figures = await loadPhase(bench, batchMs, rounds);
      loads.push(figures);
      notes.push(...figures.notes);
      rows.push({
        measurement: `todo_write on other sessions while ${STREAMS_AT_ONCE} sessions stream, vs quiet (words every ${batchMs} ms${batchMs === DEFAULT_STREAM_BATCH_MS ? ', the default' : ''})`,
        ours: pcts(figures.loaded),
        baseline: pcts(figures.quiet),
        ratio: figures.loaded.p50 / figures.quiet.p50,
        target: batchMs === DEFAULT_STREAM_BATCH_MS ? `≤ ${LOAD_TARGET}× p50` : '—',
        met: batchMs === DEFAULT_STREAM_BATCH_MS ? figures.loaded.p50 / figures.quiet.p50 <= LOAD_TARGET : null,
      });
    }
    const events = (h: Array<{ events: number }>): string => h.map((x) => x.events).join(', ');
    notes.push(
      `first words: p50 ${ms(first.p50)} ms, p95 ${ms(first.p95)} ms, max ${ms(first.max)} ms over ${turns} turns (the model's first token, stamped by the scripted model as it writes it, to the SSE reader's first text event; both in this process).`,
      `history events of each turn, streamed: ${events(on)}; not streamed: ${events(off)} (they differ only in how events fell into workflow tasks, which timing decides).`,
    );
    return {
      name: 'streaming',
      title: `Streaming: the model's words to SSE readers (${ANSWER_TOKENS}-token answers at ${RATE} tokens/s)`,
      rows,
      figures: { rate: RATE, answerTokens: ANSWER_TOKENS, firstWordsMs: first, readings, history: { streamed: on, plain: off }, loads },
      notes,
    };
  } finally {
    await http.close();
    await Promise.allSettled([streamed.stop(), plain.stop()]);
    await model.close();
  }
}
