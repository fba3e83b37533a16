/**
 * Tools from MCP servers inside a turn, each next to the same work done without a turn:
 *
 * - a quick MCP tool called by the agent loop: a scripted model makes N calls of
 *   server-everything's `echo` (Streamable HTTP) in one turn, each timed in the session's
 *   history as its `runTool` activity's ActivityTaskScheduled → ActivityTaskCompleted, next to
 *   the same call made with the v2 SDK's `Client.callTool` over a connection of its own to the
 *   same server. The direct call is made while the turn waits for the model's next answer, so the
 *   two alternate call by call and never run at once, and the model's own time is in neither.
 *   What the turn should add is one activity round trip: a no-op activity on a bare worker
 *   (`baseline-activity.ts`), run at the same moments, is that floor, and a user tool that does
 *   nothing, called in the same turns, is `runTool`'s own round trip;
 * - the `beginTurn` activity (scheduled → completed, in history) on a worker with three MCP
 *   servers (server-everything over Streamable HTTP, two filesystem servers over stdio) next to
 *   one with none, turns alternating: warm (the worker's pool connected at its first turn), with
 *   the same three servers' `tools/list` made from this process on a warm pool of its own at the
 *   same moments; and the first turn of fresh workers apart (cold: the stdio servers starting).
 *
 * Why `echo` over HTTP rather than the filesystem server's `read_text_file` over stdio: both
 * clients then reach one server process (a stdio server is a process of each client's own), and
 * `echo` does nothing but answer (no file system, no path checks), so what the figures compare is
 * the path to the tool, not the tool. No target: the issue gives none in numbers, and says what to
 * expect (the turn adds about one activity round trip); the rows report it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { McpPool } from '../activities/mcp-pool';
import { listMcpTools, pinTools } from '../activities/mcp-tools';
import type { SessionClient } from '../src/client';
import { connectionOptions, loadSettings } from '../src/config';
import type { McpServerConfig } from '../src/config/mcp-servers';
import { findFreePort } from '../src/devserver';
import { startModelServer, type ScriptJson } from '../src/model-server';
import type { UserTool } from '../src/worker';
import { BARE_ACTIVITY_WORKFLOW_TYPE, runNoopUpdate, type NoopActivities } from './baseline-activity';
import { int, ms, pcts, type MeasurementResult, type Row } from './report';
import type { Bench } from './setup';
import { median, summarize } from './stats';

const ROOT = join(__dirname, '..');
const EVERYTHING_SERVER = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const FILESYSTEM_SERVER = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const MODEL = 'scripted-tools';
const MCP_ECHO = 'mcp__everything__echo';
const LOCAL_ECHO = 'local_echo';
const CALLS_TASK = 'Call the echo tools';
const START_TASK = 'Answer at once';
const CLIENT_INFO = { name: 'agent-sessions-bench', version: '1.0.0' };

/** A user tool that does nothing but answer, as `echo` does: its `runTool` is the activity's round trip alone. */
const LOCAL_TOOLS: UserTool[] = [
  {
    name: LOCAL_ECHO,
    description: 'Echoes back the input string, without leaving the worker.',
    parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'], additionalProperties: false },
    run: ({ message }: { message: string }) => `Echo: ${message}`,
  },
];

/** Sizes of a run. */
interface Sizes {
  /** MCP calls per turn (as many user-tool calls between them). */
  callsPerTurn: number;
  /** Turns of calls measured, after one turn of warm-up. */
  callTurns: number;
  /** Turns per session in the turn-start comparison, and sessions of each kind. */
  turnsPerSession: number;
  startSessions: number;
  /** Turns of each kind discarded at the start of the warm comparison. */
  startWarmup: number;
  /** Fresh worker pairs whose first turns are the cold figures. */
  coldPairs: number;
}

function sizes(quick: boolean): Sizes {
  return quick
    ? { callsPerTurn: 10, callTurns: 3, turnsPerSession: 8, startSessions: 2, startWarmup: 2, coldPairs: 1 }
    : { callsPerTurn: 25, callTurns: 12, turnsPerSession: 10, startSessions: 9, startWarmup: 10, coldPairs: 5 };
}

/** The model's script: a turn of calls (MCP `echo`, then the user tool, N times) and a turn that answers at once. */
function script(size: Sizes): ScriptJson {
  type Step = ScriptJson['conversations'][number]['steps'][number];
  const calls: Step[] = [];
  const after = (text: string) => ({ expect: { lastMessage: { role: 'tool' as const, contentMatches: `^Echo: ${text}$` } } });
  for (let k = 0; k < size.callsPerTurn; k++) {
    calls.push({ ...(k > 0 ? after(`local ${k - 1}`) : {}), respond: { tool_calls: [{ name: MCP_ECHO, arguments: { message: `mcp ${k}` } }] } });
    calls.push({ ...after(`mcp ${k}`), respond: { tool_calls: [{ name: LOCAL_ECHO, arguments: { message: `local ${k}` } }] } });
  }
  calls.push({ ...after(`local ${size.callsPerTurn - 1}`), respond: { content: 'Done.' } });
  return {
    description: 'The tools measurement: tool calls one after the other, and turns that answer at once.',
    model: MODEL,
    conversations: [
      { name: 'calls', match: { firstUserMessage: `^${CALLS_TASK}$` }, steps: calls },
      { name: 'starts', match: { firstUserMessage: `^${START_TASK}$` }, steps: Array.from({ length: size.turnsPerSession }, () => ({ respond: { content: 'Done.' } })) },
    ],
  };
}

/** `@modelcontextprotocol/server-everything` over Streamable HTTP on a free loopback port, once it answers. */
async function startEverythingServer(): Promise<{ url: string; stop(): void }> {
  const port = await findFreePort();
  // Its stdout logs every request: not read, so not piped. Its stderr is kept short for an error.
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}/mcp`;
  const deadline = Date.now() + 30_000;
  while (!(await fetch(url).then(() => true, () => false))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      throw new Error(`server-everything did not listen on ${url} within 30 s; stderr: ${stderr}`);
    }
    await sleep(100);
  }
  return { url, stop: () => void child.kill() };
}

/**
 * The scripted model behind a gate: each chat request waits for `onRequest(step)` (`step`: the
 * assistant messages already in it, the script's step) before the model answers it. What the
 * bench does there runs while the turn waits for the model, so it shares the machine with no
 * activity of the turn. A failure there is kept in `errors` and the model answers anyway.
 */
interface ModelGate {
  url: string;
  onRequest: (step: number) => Promise<void>;
  errors: unknown[];
  close(): Promise<void>;
}

async function startModelGate(modelUrl: string): Promise<ModelGate> {
  const origin = new URL(modelUrl).origin;
  const gate: ModelGate = { url: '', onRequest: async () => undefined, errors: [], close: async () => undefined };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      let step = -1;
      try {
        step = (JSON.parse(body) as { messages: Array<{ role: string }> }).messages.filter((message) => message.role === 'assistant').length;
      } catch {
        // Not a chat request: passed on as it is.
      }
      await gate.onRequest(step).catch((error: unknown) => void gate.errors.push(error));
      const answer = await fetch(`${origin}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        ...(req.method === 'POST' ? { body } : {}),
      });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`the model gate failed: ${String(error)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  gate.url = `http://127.0.0.1:${port}/v1`;
  gate.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return gate;
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Runs one turn: sends `text` and returns once the turn has ended, `think(step)` running at each
 * of its model requests. The session is asked whether the turn ended once a second until the
 * model got its last request (`lastStep`), then every 5 ms: its queries go to the worker whose
 * activities are timed.
 */
async function runTurn(gate: ModelGate, sessions: SessionClient, id: string, text: string, lastStep: number, think: (step: number) => Promise<void>): Promise<void> {
  let asked = false;
  let reached: () => void = () => undefined;
  const lastAsked = new Promise<void>((resolve) => (reached = resolve));
  gate.onRequest = async (step) => {
    try {
      await think(step);
    } finally {
      if (step === lastStep) {
        asked = true;
        reached();
      }
    }
  };
  const sent = await sessions.sendMessage(id, text);
  const deadline = Date.now() + 300_000;
  for (;;) {
    if (asked) await sleep(5);
    else await Promise.race([lastAsked, sleep(1000, undefined, { ref: false })]);
    const snapshot = await sessions.session(id);
    const turn = snapshot.agent.lastTurn;
    if (turn?.messageId === sent.messageId && snapshot.agent.activity.state === 'idle' && !snapshot.turnOpen) {
      if (turn.reason !== 'completed') throw new Error(`the turn of ${id} ended ${turn.reason}: ${turn.detail ?? ''}`);
      break;
    }
    if (Date.now() > deadline) throw new Error(`the turn of ${id} did not end within 300 s`);
  }
  gate.onRequest = async () => undefined;
  if (gate.errors.length > 0) throw gate.errors[0] instanceof Error ? gate.errors[0] : new Error(String(gate.errors[0]));
}

/** One activity of a session's history: its type and input, and when the server recorded it scheduled, started and completed. */
interface ActivityTiming {
  type: string;
  input: unknown;
  scheduledMs: number;
  startedMs: number;
  completedMs: number;
  resultBytes: number;
}

/** Milliseconds of a history event's time (protobuf Timestamp, to the nanosecond). */
function eventMs(time: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  const seconds = time?.seconds;
  const whole = typeof seconds === 'number' ? seconds : typeof seconds === 'object' && seconds !== null ? (seconds as { toNumber(): number }).toNumber() : 0;
  return whole * 1000 + (time?.nanos ?? 0) / 1e6;
}

/** The session's completed activities, in the order they were scheduled. */
async function activityTimings(bench: Bench, id: string): Promise<ActivityTiming[]> {
  const history = await bench.temporal.workflow.getHandle(id).fetchHistory();
  const byScheduled = new Map<string, Partial<ActivityTiming>>();
  const order: string[] = [];
  for (const event of history.events ?? []) {
    const at = eventMs(event.eventTime);
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const key = String(event.eventId);
      const payload = scheduled.input?.payloads?.[0];
      byScheduled.set(key, { type: scheduled.activityType?.name ?? '', input: payload ? defaultPayloadConverter.fromPayload(payload) : undefined, scheduledMs: at });
      order.push(key);
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started) byScheduled.get(String(started.scheduledEventId))!.startedMs = at;
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const timing = byScheduled.get(String(completed.scheduledEventId))!;
      timing.completedMs = at;
      timing.resultBytes = completed.result?.payloads?.reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0) ?? 0;
    }
  }
  return order.map((key) => byScheduled.get(key)!).filter((timing): timing is ActivityTiming => timing.completedMs !== undefined);
}

const took = (timing: ActivityTiming): number => timing.completedMs - timing.scheduledMs;

/** The text of an `echo` answer; throws unless it is `Echo: <message>`. */
function echoed(result: unknown, message: string): void {
  const { content, isError } = result as CallToolResult;
  const text = content.length === 1 && content[0]!.type === 'text' ? content[0]!.text : JSON.stringify(content);
  if (isError === true || text !== `Echo: ${message}`) throw new Error(`echo answered ${text.slice(0, 200)}, expected Echo: ${message}`);
}

/** What both comparisons share: the servers, the model, the two workers and the direct clients. */
interface Shared {
  size: Sizes;
  gate: ModelGate;
  /** The three servers a worker with MCP tools has. */
  servers: McpServerConfig[];
  /** The session worker with the three servers, and the one with none (both have the user tool). */
  withMcp: { sessions: SessionClient; stop(): Promise<void> };
  without: { sessions: SessionClient; stop(): Promise<void> };
  agent: { baseUrl: string; model: string; nudge: false; stream: false; approveTools: string[]; maxSteps: number };
}

/** A worker on a queue of its own running the bare workflow of `baseline-activity.ts` and its no-op activity. */
async function startBareActivityWorker(bench: Bench): Promise<{ taskQueue: string; stop(): Promise<void> }> {
  const taskQueue = bench.id('bench-tools-bare');
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./baseline-activity'), logger: quietLogger });
  // Its own connection, as createWorker opens one for each session worker.
  const connection = await NativeConnection.connect(connectionOptions({ ...loadSettings(process.env).temporal, address: bench.address }));
  const activities: NoopActivities = { noop: async () => null };
  const worker = await Worker.create({ connection, namespace: bench.namespace, taskQueue, workflowBundle, activities });
  const running = worker.run().finally(() => connection.close());
  return {
    taskQueue,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`bare activity bundler: ${message}\n`),
  error: (message: string) => process.stderr.write(`bare activity bundler: ${message}\n`),
};

/**
 * N MCP calls in a turn, each followed by the SDK's own call, a user tool's call in the turn and a
 * no-op activity on a bare worker: the four alternate, one at a time.
 */
async function measureCalls(bench: Bench, shared: Shared, rows: Row[], notes: string[], figures: Record<string, unknown>): Promise<void> {
  const { size, gate } = shared;
  const server = shared.servers.find((s) => s.name === 'everything')!;
  if (server.transport.kind !== 'http') throw new Error('the everything server is reached over HTTP');
  const direct = new Client(CLIENT_INFO);
  await direct.connect(new StreamableHTTPClientTransport(new URL(server.transport.url)));
  const bare = await startBareActivityWorker(bench);
  const samples = { mcp: [] as number[], local: [] as number[], direct: [] as number[], bare: [] as number[], mcpDispatch: [] as number[], localDispatch: [] as number[], bareDispatch: [] as number[] };
  const ids: string[] = [];
  try {
    for (let turn = 0; turn <= size.callTurns; turn++) {
      const id = bench.id('tools-calls');
      ids.push(id);
      const floor = await bench.temporal.workflow.start(BARE_ACTIVITY_WORKFLOW_TYPE, { workflowId: bench.id('tools-bare'), taskQueue: bare.taskQueue, args: [size.callsPerTurn] });
      const directMs: number[] = [];
      // The model's step 2k+1 answers the k-th MCP call: the SDK's call goes there; its step
      // 2k+2 answers the k-th user-tool call: the bare no-op activity goes there.
      await runTurn(gate, shared.withMcp.sessions, id, CALLS_TASK, 2 * size.callsPerTurn, async (step) => {
        if (step <= 0) return;
        if (step % 2 === 0) {
          await floor.executeUpdate(runNoopUpdate);
          return;
        }
        const message = `direct ${(step - 1) / 2}`;
        const start = performance.now();
        const result = await direct.callTool({ name: 'echo', arguments: { message } });
        directMs.push(performance.now() - start);
        echoed(result, message);
      });
      await floor.result();
      const runs = (await activityTimings(bench, id)).filter((timing) => timing.type === 'runTool');
      const mcp = runs.filter((timing) => (timing.input as { name?: string }).name === MCP_ECHO);
      const local = runs.filter((timing) => (timing.input as { name?: string }).name === LOCAL_ECHO);
      const noop = await activityTimings(bench, floor.workflowId);
      if ([mcp.length, local.length, directMs.length, noop.length].some((count) => count !== size.callsPerTurn)) {
        throw new Error(
          `the turn of ${id} made ${mcp.length} MCP calls, ${local.length} user-tool calls, ${directMs.length} direct calls and ${noop.length} bare activities; expected ${size.callsPerTurn} of each`,
        );
      }
      if (turn === 0) continue; // warm-up
      const dispatch = (timing: ActivityTiming): number => timing.startedMs - timing.scheduledMs;
      samples.mcp.push(...mcp.map(took));
      samples.local.push(...local.map(took));
      samples.direct.push(...directMs);
      samples.bare.push(...noop.map(took));
      samples.mcpDispatch.push(...mcp.map(dispatch));
      samples.localDispatch.push(...local.map(dispatch));
      samples.bareDispatch.push(...noop.map(dispatch));
      bench.progress(`tools: calls ${samples.mcp.length}/${size.callsPerTurn * size.callTurns}`);
    }
  } finally {
    await direct.close().catch(() => undefined);
    await bare.stop();
    await Promise.allSettled(ids.map((id) => shared.withMcp.sessions.close(id)));
  }
  const m = summarize(samples.mcp);
  const d = summarize(samples.direct);
  const l = summarize(samples.local);
  const b = summarize(samples.bare);
  const added = { p50: m.p50 - d.p50, p95: m.p95 - d.p95 };
  const dispatch = { mcp: median(samples.mcpDispatch), local: median(samples.localDispatch), bare: median(samples.bareDispatch) };
  figures.calls = {
    parameters: { callsPerTurn: size.callsPerTurn, turns: size.callTurns, warmupTurns: 1, tool: 'server-everything echo over Streamable HTTP' },
    ms: {
      runToolMcp: m,
      clientCallTool: d,
      runToolUserTool: l,
      bareNoopActivity: b,
      scheduledToStarted: { runToolMcp: summarize(samples.mcpDispatch), runToolUserTool: summarize(samples.localDispatch), bareNoopActivity: summarize(samples.bareDispatch) },
    },
    addedByTurnMs: added,
    samples,
  };
  rows.push(
    { measurement: 'MCP echo in a turn (runTool) vs Client.callTool', ours: pcts(m), baseline: pcts(d), ratio: m.p50 / d.p50, target: '—', met: null },
    {
      measurement: '  the turn adds (p50 / p95) vs a no-op activity, bare worker',
      ours: `${ms(added.p50)} / ${ms(added.p95)}`,
      baseline: `${ms(b.p50)} / ${ms(b.p95)}`,
      ratio: added.p50 / b.p50,
      target: '—',
      met: null,
    },
    { measurement: 'a user tool that does nothing (runTool) vs a no-op activity', ours: pcts(l), baseline: pcts(b), ratio: l.p50 / b.p50, target: '—', met: null },
  );
  notes.push(
    `tool calls: ${m.n} of each in ${size.callTurns} turns of ${size.callsPerTurn} (after a turn of warm-up), one at a time in this order: the MCP call in the turn, ` +
      'the same call by Client.callTool, the user tool in the turn, the bare no-op activity; the last three while the turn waits for the model, whose own time is in none. ' +
      "runTool and the no-op activity are timed in history, from the server recording ActivityTaskScheduled (on the workflow task that made the call) to its recording " +
      "ActivityTaskCompleted: the task reaching the worker's poll, the worker running it, the completion's call back; not the workflow tasks before and after. For echo the " +
      "running is the pool's callTool (a Streamable HTTP POST to server-everything and its answer, the SDK's checks); the user tool (local_echo) answers without leaving the " +
      'worker. Client.callTool is the v2 SDK\'s call timed in this process, on a connection of its own to the same server-everything process.',
    `of each activity, scheduled → started (the task reaching the worker) took ${ms(dispatch.mcp)} ms (median) for echo, ${ms(dispatch.local)} ms for the user tool and ` +
      `${ms(dispatch.bare)} ms for the bare no-op activity; the turn adds ${ms(added.p50)} ms to echo at p50 (${ms(added.p95)} ms at p95), ` +
      `${(added.p50 / b.p50).toFixed(2)}× the no-op activity's round trip (${ms(b.p50)} ms).`,
  );
  bench.progress(`tools calls: runTool ${ms(m.p50)} vs callTool ${ms(d.p50)} ms; a user tool ${ms(l.p50)}, a bare no-op activity ${ms(b.p50)} ms (p50)`);
}

/** A `beginTurn` as history has it: its whole time, and of it the task reaching the worker. */
interface Begin {
  ms: number;
  dispatchMs: number;
}

const begin = (timing: ActivityTiming): Begin => ({ ms: took(timing), dispatchMs: timing.startedMs - timing.scheduledMs });

/** One turn on each worker of a fresh pair: their first beginTurn, servers starting. */
async function coldStart(bench: Bench, shared: Shared, index: number): Promise<{ withMcp: Begin; without: Begin; listingMs: number }> {
  const pair = {
    withMcp: await bench.openQueue(`tools-cold-mcp${index}`, { worker: { agent: { ...shared.agent, mcpServers: shared.servers }, tools: LOCAL_TOOLS } }),
    without: await bench.openQueue(`tools-cold-none${index}`, { worker: { agent: shared.agent, tools: LOCAL_TOOLS } }),
  };
  try {
    return await firstTurns(bench, shared, pair, index);
  } finally {
    await Promise.allSettled([pair.withMcp.stop(), pair.without.stop()]);
  }
}

/**
 * The first turn's beginTurn on each worker of a pair, in rotating order, and the same first
 * listing from this process on a fresh pool of its own (the stdio servers starting for it too),
 * made while the turn with servers waits for the model.
 */
async function firstTurns(bench: Bench, shared: Shared, pair: Pick<Shared, 'withMcp' | 'without'>, index: number): Promise<{ withMcp: Begin; without: Begin; listingMs: number }> {
  const kinds = ['withMcp', 'without'] as const;
  const times: Partial<Record<(typeof kinds)[number], Begin>> = {};
  let listingMs = Number.NaN;
  for (let k = 0; k < 2; k++) {
    const kind = kinds[(k + index) % 2]!;
    const id = bench.id(`tools-cold-${kind}`);
    await runTurn(shared.gate, pair[kind].sessions, id, START_TASK, 0, async () => {
      if (kind !== 'withMcp') return;
      const pool = new McpPool(shared.servers, () => undefined);
      try {
        const start = performance.now();
        const listed = await listMcpTools(pool);
        listingMs = performance.now() - start;
        if (listed.notes.length > 0) throw new Error(`listing the three servers' tools: ${listed.notes.join(' ')}`);
      } finally {
        await pool.close();
      }
    });
    times[kind] = begin((await activityTimings(bench, id)).find((timing) => timing.type === 'beginTurn')!);
    await pair[kind].sessions.close(id);
  }
  return { withMcp: times.withMcp!, without: times.without!, listingMs };
}

/** beginTurn with three MCP servers next to none: warm turns alternating, and cold first turns. */
async function measureStarts(bench: Bench, shared: Shared, rows: Row[], notes: string[], figures: Record<string, unknown>): Promise<void> {
  const { size, gate } = shared;
  // The main pair's first turns are the first cold figures; fresh pairs give the rest.
  const cold = [await firstTurns(bench, shared, shared, 0)];
  const pool = new McpPool(shared.servers, () => undefined);
  const warm = { withMcp: [] as Begin[], without: [] as Begin[], listing: [] as number[] };
  const payload = { withMcp: 0, without: 0, tools: 0, pinMs: 0 };
  try {
    await listMcpTools(pool); // connects this process's own pool: the workers' pools are connected by now
    let turns = 0;
    for (let s = 0; s < size.startSessions; s++) {
      const ids = { withMcp: bench.id('tools-start-mcp'), without: bench.id('tools-start-none') };
      const listing: number[] = [];
      for (let t = 0; t < size.turnsPerSession; t++, turns++) {
        const kinds = turns % 2 === 0 ? (['withMcp', 'without'] as const) : (['without', 'withMcp'] as const);
        for (const kind of kinds) {
          // After beginTurn with three servers, while the turn waits for the model: the same listing from this process.
          await runTurn(gate, shared[kind].sessions, ids[kind], START_TASK, t, async () => {
            if (kind !== 'withMcp') return;
            const start = performance.now();
            const listed = await listMcpTools(pool);
            listing.push(performance.now() - start);
            if (listed.notes.length > 0) throw new Error(`listing the three servers' tools: ${listed.notes.join(' ')}`);
            payload.tools = listed.definitions.length;
          });
        }
      }
      const begins = {
        withMcp: (await activityTimings(bench, ids.withMcp)).filter((timing) => timing.type === 'beginTurn'),
        without: (await activityTimings(bench, ids.without)).filter((timing) => timing.type === 'beginTurn'),
      };
      await Promise.all([shared.withMcp.sessions.close(ids.withMcp), shared.without.sessions.close(ids.without)]);
      if (begins.withMcp.length !== size.turnsPerSession || begins.without.length !== size.turnsPerSession) throw new Error('a session of the turn-start comparison is missing a beginTurn');
      payload.withMcp = begins.withMcp.at(-1)!.resultBytes;
      payload.without = begins.without.at(-1)!.resultBytes;
      const skip = s === 0 ? size.startWarmup : 0;
      warm.withMcp.push(...begins.withMcp.slice(skip).map(begin));
      warm.without.push(...begins.without.slice(skip).map(begin));
      warm.listing.push(...listing.slice(skip));
      bench.progress(`tools: turn starts ${warm.withMcp.length}/${size.turnsPerSession * size.startSessions - size.startWarmup}`);
    }
    // Pinning the listed definitions (what beginTurn does with them besides listing), in this process.
    const { definitions } = await listMcpTools(pool);
    const pinning: number[] = [];
    for (let i = 0; i < 200; i++) {
      const start = performance.now();
      pinTools(definitions, {});
      pinning.push(performance.now() - start);
    }
    payload.pinMs = median(pinning);
  } finally {
    await pool.close();
  }
  for (let i = 1; i < size.coldPairs; i++) {
    cold.push(await coldStart(bench, shared, i));
    bench.progress(`tools: cold turn starts ${cold.length}/${size.coldPairs}`);
  }
  const whole = (begins: Begin[]) => summarize(begins.map((b) => b.ms));
  const dispatched = (begins: Begin[]) => median(begins.map((b) => b.dispatchMs));
  const w = whole(warm.withMcp);
  const n = whole(warm.without);
  const l = summarize(warm.listing);
  const cw = whole(cold.map((c) => c.withMcp));
  const cn = whole(cold.map((c) => c.without));
  const cl = summarize(cold.map((c) => c.listingMs));
  const coldAdded = { p50: cw.p50 - cn.p50, p95: cw.p95 - cn.p95 };
  const dispatch = { warmWithMcp: dispatched(warm.withMcp), warmWithout: dispatched(warm.without), coldWithMcp: dispatched(cold.map((c) => c.withMcp)), coldWithout: dispatched(cold.map((c) => c.without)) };
  const added = { p50: w.p50 - n.p50, p95: w.p95 - n.p95 };
  figures.turnStart = {
    parameters: { servers: shared.servers.map((s) => `${s.name} (${s.transport.kind})`), turnsPerSession: size.turnsPerSession, sessions: size.startSessions, warmup: size.startWarmup, coldPairs: size.coldPairs },
    ms: { warm: { withMcp: w, without: n, listingInThisProcess: l, pinningMedian: payload.pinMs }, cold: { withMcp: cw, without: cn, listingInThisProcess: cl }, scheduledToStartedMedian: dispatch },
    addedWarmMs: added,
    addedColdMs: coldAdded,
    resultBytes: { withMcp: payload.withMcp, without: payload.without },
    mcpTools: payload.tools,
    samples: { warm, cold },
  };
  rows.push(
    { measurement: 'beginTurn, 3 MCP servers vs none (warm)', ours: pcts(w), baseline: pcts(n), ratio: w.p50 / n.p50, target: '—', met: null },
    {
      measurement: '  the servers add (p50 / p95) vs their tools/list from this process',
      ours: `${ms(added.p50)} / ${ms(added.p95)}`,
      baseline: `${ms(l.p50)} / ${ms(l.p95)}`,
      ratio: added.p50 / l.p50,
      target: '—',
      met: null,
    },
    {
      measurement: `beginTurn, 3 MCP servers vs none (cold: first turn, ${cold.length} fresh worker${cold.length === 1 ? '' : 's'})`,
      ours: pcts(cw),
      baseline: pcts(cn),
      ratio: cw.p50 / cn.p50,
      target: '—',
      met: null,
    },
    {
      measurement: '  the servers add (p50 / p95) vs their first tools/list from this process',
      ours: `${ms(coldAdded.p50)} / ${ms(coldAdded.p95)}`,
      baseline: `${ms(cl.p50)} / ${ms(cl.p95)}`,
      ratio: coldAdded.p50 / cl.p50,
      target: '—',
      met: null,
    },
  );
  notes.push(
    `beginTurn is timed in the session's history, ActivityTaskScheduled to ActivityTaskCompleted; with or without servers it queries the session and signals turn/start. ` +
      `With the three servers (${shared.servers.map((s) => `${s.name} over ${s.transport.kind}`).join(', ')}) it also lists their ${payload.tools} tools side by side, pins ` +
      `their definitions (${ms(payload.pinMs)} ms in this process, median) and answers them with the turn's settings: ${int(payload.withMcp)} bytes of result against ` +
      `${int(payload.without)}. Warm: ${w.n} turns of each, alternating, after ${size.startWarmup} of warm-up; the worker's pool connected at its first turn. The same ` +
      `listing (listMcpTools on a warm pool of this process's own) is timed after each such beginTurn, while the turn waits for the model. Of beginTurn, scheduled → started ` +
      `(the task reaching the worker) took ${ms(dispatch.warmWithMcp)} and ${ms(dispatch.warmWithout)} ms (medians, with and without).`,
    `cold: the first turn of ${cold.length === 1 ? 'a fresh pair' : `${cold.length} fresh pairs`} of workers, each on a task queue of its own (the pool connecting: ` +
      "server-everything's initialize over HTTP, both filesystem servers started as node processes); the worker without servers pays its own first activity. " +
      `Scheduled → started took ${ms(dispatch.coldWithMcp)} and ${ms(dispatch.coldWithout)} ms (medians, with and without): a fresh queue's first tasks reach their worker ` +
      `sooner than later ones do. The first listing from this process is made on a fresh pool of its own (its stdio servers starting too) while the turn with servers ` +
      `waits for the model. ${cold.length === 1 ? 'Each figure is one turn.' : 'p95 and p99 are the slowest of the few.'}`,
  );
  bench.progress(`tools starts: beginTurn ${ms(w.p50)} vs ${ms(n.p50)} ms warm, ${ms(cw.p50)} vs ${ms(cn.p50)} ms cold (p50)`);
}

export async function measureTools(bench: Bench): Promise<MeasurementResult> {
  const size = sizes(bench.quick);
  const everything = await startEverythingServer();
  const folders = [0, 1].map((k) => {
    const dir = mkdtempSync(join(tmpdir(), `agent-sessions-bench-fs${k}-`));
    writeFileSync(join(dir, 'notes.txt'), 'durable notes\n');
    return dir;
  });
  const servers: McpServerConfig[] = [
    { name: 'everything', transport: { kind: 'http', url: everything.url, headers: {} }, callTimeoutMs: 60_000 },
    { name: 'fs', transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM_SERVER, folders[0]!], env: {} }, callTimeoutMs: 60_000 },
    { name: 'fs2', transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM_SERVER, folders[1]!], env: {} }, callTimeoutMs: 60_000 },
  ];
  const model = await startModelServer({ script: script(size) });
  const gate = await startModelGate(model.url);
  const agent = { baseUrl: gate.url, model: MODEL, nudge: false as const, stream: false as const, approveTools: [], maxSteps: 2 * size.callsPerTurn + 5 };
  const rows: Row[] = [];
  const notes: string[] = [];
  const figures: Record<string, unknown> = {};
  const withMcp = await bench.openQueue('tools-mcp', { worker: { agent: { ...agent, mcpServers: servers }, tools: LOCAL_TOOLS } });
  const without = await bench.openQueue('tools-none', { worker: { agent, tools: LOCAL_TOOLS } });
  const shared: Shared = { size, gate, servers, withMcp, without, agent };
  const starts = { rows: [] as Row[], notes: [] as string[] };
  try {
    // Turn starts first: the pair's first turns are cold. The table shows the calls first.
    await measureStarts(bench, shared, starts.rows, starts.notes, figures);
    await measureCalls(bench, shared, rows, notes, figures);
    rows.push(...starts.rows);
    notes.push(...starts.notes);
  } finally {
    await Promise.allSettled([withMcp.stop(), without.stop()]);
    await gate.close();
    await model.close();
    everything.stop();
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  }
  return {
    name: 'tools',
    title:
      "MCP tools in a turn — ms p50 / p95 / p99, activities timed in history; baselines: the same call by the MCP SDK's Client, a no-op activity on a bare worker, beginTurn on a worker without MCP servers",
    rows,
    figures,
    notes,
  };
}
