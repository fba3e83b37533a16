/**
 * Scale (issue 11 item 7): thousands of agents at once, then one agent for a long time.
 *
 *   load   2,000 sessions, 25 writes each, from 50 concurrent clients in 5 writer processes
 *          (bench/load/writer.ts in `round-robin` order: every session is open from the first
 *          round on, each still written one write at a time), through the bench's one session
 *          worker; every session then checked against what the writers were told
 *          (bench/load/verify-load.ts). Then the same load of no-op updates, update-with-start
 *          on bare workflows, through the bare worker: Temporal's floor.
 *   long   one session taking 50,000 writes in sequence from this process, through
 *          continue-as-new every 500 applied events; then its history checked the same way.
 *
 * The clients are other processes, so this process's memory is the worker's: process.memoryUsage()
 * is sampled every second. CPU time of the Temporal server, this process and the writers
 * (bench/load/usage.ts) names what limits the throughput on this machine. `--quick`: 100
 * sessions × 5 writes from 10 clients in 2 processes, and a 2,000-write session.
 */
import type { SessionClient } from '../src/client';
import { cpuBetween, cpuSnapshot, exposeGc, findDevServerPid, sampleMemory, type CpuUse, type MemorySample } from './load/usage';
import { runLoadWriters, verifyLoad, type AcceptedWrite, type LoadRun, type LoadVerification } from './load/verify-load';
import { describeError, isTransientWriteError, loadTodos, loadUpdateId } from './load/writer';
import { int, pcts, type MeasurementResult, type Row } from './report';
import { closeAll, type Bench } from './setup';
import { median, summarize, type Summary } from './stats';

interface Size {
  sessions: number;
  writes: number;
  clients: number;
  processes: number;
  longWrites: number;
  /** Memory sampled this often; and after a collection this often during a load. */
  sampleMs: number;
  collectMs: number;
}

const FULL: Size = { sessions: 2000, writes: 25, clients: 50, processes: 5, longWrites: 50_000, sampleMs: 1000, collectMs: 15_000 };
const QUICK: Size = { sessions: 100, writes: 5, clients: 10, processes: 2, longWrites: 2_000, sampleMs: 250, collectMs: 2_000 };
/** Memory is flat when a later median is at most this many times an earlier one. */
const MEMORY_LIMIT = 1.2;
/** p99 at most this many times p50. */
const TAIL_LIMIT = 3;
/** A machine this busy (fraction of its cores) has no CPU to spare. */
const SATURATED = 0.85;

type Kind = 'ours' | 'bare';

/** What one load of the writers gave. */
interface LoadPhase {
  kind: Kind;
  run: LoadRun;
  accepted: AcceptedWrite[];
  /** Writes failed for good, plus writers that exited badly or printed no report. */
  errors: number;
  brokenWriters: string[];
  retries: number;
  writesPerSecond: number;
  latency: Summary;
  /** When every session had its first write answered (ms since the epoch). */
  allOpenAt: number;
  memory: MemorySample[];
  cpu: CpuUse;
}

/** A later window's median against an earlier one's: rss over every sample, heapUsed over those taken after a collection when there are any. */
interface Drift {
  rss: { from: number; to: number };
  heapUsed: { from: number; to: number };
  samples: { from: number; to: number };
  heapBasis: 'after a collection' | 'as sampled';
  heapSamples: { from: number; to: number };
  ratio: number;
  flat: boolean | null;
}

export async function measureScale(bench: Bench): Promise<MeasurementResult> {
  const size = bench.quick ? QUICK : FULL;
  const serverPid = bench.cliPath !== undefined ? findDevServerPid(bench.address) : undefined;
  const gc = exposeGc();
  const ours = await loadPhase(bench, 'ours', size, serverPid, gc);
  bench.progress(`scale: verifying ${int(size.sessions)} sessions against the writers' reports…`);
  const verification = await verifyLoad(bench.sessions, ours.run.sessions, ours.run.reports, { expectedPerSession: size.writes, concurrency: 16 });
  const bare = await loadPhase(bench, 'bare', size, serverPid, gc);
  bench.progress(`scale: closing the ${int(size.sessions)} sessions and ${int(size.sessions)} bare workflows…`);
  const closeFailures = await closeAll(bench, { sessions: ours.run.sessions, bare: bare.run.sessions }, { tolerate: true });
  const long = await longSession(bench, size, gc);

  const open = ours.memory.filter((sample) => sample.at >= ours.allOpenAt);
  const loadMemory = drift(quarters(open), quarters(open.filter((sample) => sample.collected === true)));
  const longWindow = longWindows(long.memory, size.longWrites);
  const longMemory = drift(longWindow, collectedOf(longWindow));
  const rows = [
    ...loadRows(size, ours, bare, verification, loadMemory),
    ...longRows(size, long, longMemory),
  ];
  const notes = [
    `the ${size.clients} clients are ${size.processes} writer processes of ${size.clients / size.processes} lanes each; each lane owns every ${size.clients}th session and writes its sessions in rounds, one write at a time per session, each a distinct 3-item list under a fixed update id (a transient failure is sent again under the same id); this process runs only the workers (and the long session's client), so its memory is the worker's`,
    `worker memory is this whole process: the workflows run in the worker's workflow thread, whose heap only rss sees; heapUsed is the main thread's (the SDK, the gRPC bridge's buffers, the idle client)`,
    `memory is flat when both the later median of rss and that of heapUsed are ≤ ${MEMORY_LIMIT}× the earlier one; load (from when every session had its first write answered, first quarter against last): ${memoryBasis(loadMemory)}; one session (while writes ${int(size.longWrites / 10 + 1)}–${int(size.longWrites / 10 + size.longWrites / 20)} were made against the last ${int(size.longWrites / 20)}): ${memoryBasis(longMemory)}`,
    `write latency of the load, every accepted write (a session's first write, which starts it, included): bare p99 = ${(bare.latency.p99 / bare.latency.p50).toFixed(2)}× p50`,
    limitNote('ours', ours.cpu, size),
    limitNote('bare', bare.cpu, size),
    `the bare load ran after ours, on fresh workflows; one round each (the load is minutes long), so background load on the machine falls on them unevenly`,
    ...problemNotes(size, ours, bare, verification, long, closeFailures),
  ];
  return {
    name: 'scale',
    title: `scale — ${int(size.sessions)} sessions × ${size.writes} writes from ${size.clients} clients, then one session × ${int(size.longWrites)} writes; baseline: no-op updates on bare workflows`,
    rows,
    figures: figuresOf(size, serverPid, ours, bare, verification, loadMemory, long, longMemory, closeFailures),
    notes,
  };
}

/** One load of the writer processes, with this process's memory and everyone's CPU taken meanwhile. */
async function loadPhase(bench: Bench, kind: Kind, size: Size, serverPid: number | undefined, gc: (() => void) | undefined): Promise<LoadPhase> {
  const label = kind === 'ours' ? 'sessions' : 'bare workflows';
  bench.progress(`scale: ${int(size.sessions)} ${label} × ${size.writes} writes from ${size.clients} clients in ${size.processes} processes…`);
  let lastReport = Date.now();
  const onSample = (sample: MemorySample): void => {
    if (sample.at - lastReport < 30_000) return;
    lastReport = sample.at;
    bench.progress(`scale: ${kind} load running, worker rss ${mb(sample.rss)}, heapUsed ${mb(sample.heapUsed)}`);
  };
  const sampler = sampleMemory({ intervalMs: size.sampleMs, collectEveryMs: size.collectMs, onSample, ...(gc !== undefined ? { gc } : {}) });
  const before = cpuSnapshot(serverPid);
  const run = await runLoadWriters({
    prefix: bench.id(`scale-${kind}`),
    sessions: size.sessions,
    writers: size.processes,
    writes: size.writes,
    concurrency: size.clients / size.processes,
    address: bench.address,
    taskQueue: kind === 'ours' ? bench.sessionQueue : bench.bareQueue,
    timeoutMs: bench.quick ? 5 * 60_000 : 45 * 60_000,
    split: true,
    order: 'round-robin',
    workflow: kind === 'ours' ? 'session' : 'bare',
  });
  const cpu = cpuBetween(before, cpuSnapshot(serverPid));
  const memory = sampler.stop();

  const accepted = run.reports.flatMap((report) => report.accepted);
  // Exit 1 with a report: some writes failed for good, counted below; anything else is a broken writer.
  const brokenWriters = run.exits
    .filter((exit) => (exit.code !== 0 && exit.code !== 1) || exit.report === undefined)
    .map((exit) => `writer ${exit.writer} exited with ${exit.code ?? exit.signal}${exit.report === undefined ? ' and printed no report' : ''}: ${lastLine(exit.stderr)}`);
  const failed = run.reports.reduce((sum, report) => sum + report.failed.length, 0);
  const first = Math.min(...accepted.map((write) => write.firstSentAt));
  const last = Math.max(...accepted.map((write) => write.answeredAt));
  const firstAnswer = new Map<string, number>();
  for (const write of accepted) firstAnswer.set(write.session, Math.min(firstAnswer.get(write.session) ?? Infinity, write.answeredAt));
  const phase: LoadPhase = {
    kind,
    run,
    accepted,
    errors: failed + brokenWriters.length,
    brokenWriters,
    retries: accepted.reduce((sum, write) => sum + write.retries, 0),
    writesPerSecond: accepted.length > 0 ? (accepted.length * 1000) / Math.max(1, last - first) : 0,
    latency: summarize(accepted.map((write) => write.latencyMs ?? write.answeredAt - write.sentAt)),
    allOpenAt: Math.max(...firstAnswer.values()),
    memory: memory.filter((sample) => sample.at <= last),
    cpu,
  };
  bench.progress(`scale: ${kind}: ${int(accepted.length)} writes accepted, ${phase.errors} errors, ${int(phase.writesPerSecond)} writes/s, latency p50/p95/p99 ${pcts(phase.latency)} ms`);
  return phase;
}

/** What the long session gave. */
interface LongPhase {
  session: string;
  writes: number;
  failed: number;
  errors: string[];
  ms: number;
  latency: Summary;
  /** Samples tagged with the writes done when they were taken. */
  memory: MemorySample[];
  gc: boolean;
  verification: LoadVerification;
  runs: number | null;
}

/** One session, `size.longWrites` writes one after the other through `bench.sessions` (continue-as-new every 500 events). */
async function longSession(bench: Bench, size: Size, gc: (() => void) | undefined): Promise<LongPhase> {
  const n = size.longWrites;
  const session = bench.id('scale-long');
  // Preallocated, so the bookkeeping does not grow this process's heap while it is measured.
  const versions = new Uint32Array(n);
  const latencies = new Float64Array(n);
  const errors: string[] = [];
  let failed = 0;
  let done = 0;
  bench.progress(`scale: one session, ${int(n)} writes in sequence…`);
  // Timed samples, and one after a collection every n/50 writes (the long session's checkpoints).
  const sampler = sampleMemory({ intervalMs: size.sampleMs, tag: () => done, ...(gc !== undefined ? { gc } : {}) });
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    try {
      versions[i] = await writeWithRetry(bench.sessions, session, i);
    } catch (error) {
      failed++;
      if (errors.length < 5) errors.push(`write ${i}: ${describeError(error)}`);
    }
    latencies[i] = performance.now() - start;
    done = i + 1;
    if (done % (n / 50) === 0) sampler.sample();
    if (done % (n / 10) === 0) {
      const rss = process.memoryUsage().rss;
      bench.progress(`scale: one session, ${int(done)} of ${int(n)} writes, ${int((done * 1000) / (performance.now() - started))} writes/s, worker rss ${mb(rss)}`);
    }
  }
  const ms = performance.now() - started;
  const memory = sampler.stop();

  bench.progress(`scale: verifying the ${int(n)}-write session's history…`);
  const accepted: AcceptedWrite[] = [];
  for (let i = 0; i < n; i++) {
    if (versions[i] === 0) continue;
    accepted.push({ session, updateId: loadUpdateId(session, 0, i), version: versions[i]!, todos: loadTodos(0, i), retries: 0, firstSentAt: 0, sentAt: 0, answeredAt: 0 });
  }
  const verification = await verifyLoad(bench.sessions, [session], [{ writer: 0, accepted, failed: [], ms }], { expectedPerSession: n });
  const runs = await bench.temporal.workflow
    .count(`WorkflowId = '${session}'`)
    .then((result) => result.count)
    .catch(() => null);
  await bench.sessions.close(session).catch(() => undefined);
  return { session, writes: n, failed, errors, ms, latency: summarize(Array.from(latencies)), memory, gc: gc !== undefined, verification, runs };
}

/** Write `i` of the long session, sent again under the same update id while it fails transiently; answers the version. */
async function writeWithRetry(client: SessionClient, session: string, i: number): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await client.todoWrite(session, { todos: loadTodos(0, i) }, { updateId: loadUpdateId(session, 0, i) })).version;
    } catch (error) {
      if (!isTransientWriteError(error) || attempt >= 10) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/** The first and last quarters of a series of samples. */
function quarters(samples: readonly MemorySample[]): { from: MemorySample[]; to: MemorySample[] } {
  const q = Math.floor(samples.length / 4);
  return { from: samples.slice(0, q), to: samples.slice(samples.length - q) };
}

/** The long session's windows: the samples while writes n/10+1 … n/10+n/20 were made, and over the last n/20 writes. */
function longWindows(samples: readonly MemorySample[], n: number): { from: MemorySample[]; to: MemorySample[] } {
  const mark = n / 10;
  return {
    from: samples.filter((sample) => (sample.tag ?? 0) >= mark && (sample.tag ?? 0) <= mark + n / 20),
    to: samples.filter((sample) => (sample.tag ?? 0) >= n - n / 20),
  };
}

function drift(windows: { from: MemorySample[]; to: MemorySample[] }, collected: { from: MemorySample[]; to: MemorySample[] }): Drift {
  const of = (key: 'rss' | 'heapUsed', from: MemorySample[], to: MemorySample[]): { from: number; to: number } => ({
    from: median(from.map((sample) => sample[key])),
    to: median(to.map((sample) => sample[key])),
  });
  const afterCollection = collected.from.length > 0 && collected.to.length > 0;
  const heap = afterCollection ? collected : windows;
  const rss = of('rss', windows.from, windows.to);
  const heapUsed = of('heapUsed', heap.from, heap.to);
  const ratio = Math.max(rss.to / rss.from, heapUsed.to / heapUsed.from);
  const enough = windows.from.length > 0 && windows.to.length > 0;
  return {
    rss,
    heapUsed,
    samples: { from: windows.from.length, to: windows.to.length },
    heapBasis: afterCollection ? 'after a collection' : 'as sampled',
    heapSamples: { from: heap.from.length, to: heap.to.length },
    ratio,
    flat: enough ? ratio <= MEMORY_LIMIT : null,
  };
}

/** The samples taken after a collection. */
function collectedOf(windows: { from: MemorySample[]; to: MemorySample[] }): { from: MemorySample[]; to: MemorySample[] } {
  return { from: windows.from.filter((sample) => sample.collected === true), to: windows.to.filter((sample) => sample.collected === true) };
}

function loadRows(size: Size, ours: LoadPhase, bare: LoadPhase, verification: LoadVerification, memory: Drift): Row[] {
  const total = size.sessions * size.writes;
  const tail = (phase: LoadPhase): number => phase.latency.p99 / phase.latency.p50;
  return [
    {
      measurement: `load: writes failed for good (resent: transient, same id)`,
      ours: `${ours.errors} of ${int(total)} (${ours.retries} resent)`,
      baseline: `${bare.errors} (${bare.retries} resent)`,
      ratio: null,
      target: 'zero',
      met: ours.errors === 0,
    },
    {
      measurement: `load: accepted writes in history exactly once`,
      ours: `${int(verification.sessions.reduce((sum, s) => sum + s.inHistory, 0))} of ${int(verification.accepted)}`,
      baseline: '—',
      ratio: null,
      target: `every one, in all ${int(size.sessions)} sessions`,
      met: verification.ok && verification.accepted === total,
    },
    {
      measurement: `load: write latency p50 / p95 / p99 ms (p99 = ${tail(ours).toFixed(2)}× p50)`,
      ours: pcts(ours.latency),
      baseline: pcts(bare.latency),
      ratio: null,
      target: `p99 ≤ ${TAIL_LIMIT}× p50`,
      met: tail(ours) <= TAIL_LIMIT,
    },
    {
      measurement: `load: worker rss / heapUsed, all open, first → last quarter`,
      ours: `${mb(memory.rss.from)} → ${mb(memory.rss.to)} / ${mb(memory.heapUsed.from)} → ${mb(memory.heapUsed.to)}`,
      baseline: '—',
      ratio: memory.ratio,
      target: `both ≤ ${MEMORY_LIMIT}×`,
      met: memory.flat,
    },
    {
      measurement: `load: throughput, accepted writes/s (${size.clients} clients)`,
      ours: int(ours.writesPerSecond),
      baseline: int(bare.writesPerSecond),
      ratio: ours.writesPerSecond / bare.writesPerSecond,
      target: '—',
      met: null,
    },
  ];
}

function longRows(size: Size, long: LongPhase, memory: Drift): Row[] {
  const n = size.longWrites;
  const mark = n / 10;
  return [
    {
      measurement: `one session, ${int(n)} writes in ${long.runs ?? '?'} runs: writes/s; p50 / p99 ms`,
      ours: `${int((long.writes * 1000) / long.ms)}, ${pcts(long.latency).split(' / ').filter((_, k) => k !== 1).join(' / ')}`,
      baseline: '—',
      ratio: null,
      target: '—',
      met: null,
    },
    {
      measurement: `one session: failed writes; in history exactly once`,
      ours: `${long.failed}; ${int(long.verification.sessions[0]?.inHistory ?? 0)} of ${int(long.verification.accepted)}`,
      baseline: '—',
      ratio: null,
      target: 'zero; every one',
      met: long.failed === 0 && long.verification.ok,
    },
    {
      measurement: `one session: worker rss / heapUsed, after ${int(mark)} → last ${int(n / 20)} writes`,
      ours: `${mb(memory.rss.from)} → ${mb(memory.rss.to)} / ${mb(memory.heapUsed.from)} → ${mb(memory.heapUsed.to)}`,
      baseline: '—',
      ratio: memory.ratio,
      target: `both ≤ ${MEMORY_LIMIT}×`,
      met: memory.flat,
    },
  ];
}

/** Which of server, worker and clients limits a load on this machine, from where its CPU went. */
function limitNote(kind: Kind, cpu: CpuUse, size: Size): string {
  const f = (cores: number | null): string => (cores === null ? 'unknown' : cores.toFixed(2));
  const threads = (list: CpuUse['workerThreads']): string => list.map((thread) => `${thread.name} ${thread.cores.toFixed(2)}`).join(', ');
  const shares: Array<{ name: string; cores: number }> = [
    { name: 'the Temporal server', cores: cpu.server ?? -1 },
    { name: 'the worker (this process)', cores: cpu.worker },
    { name: `the ${size.clients} clients`, cores: cpu.clients ?? -1 },
  ].sort((a, b) => b.cores - a.cores);
  const hot = [...cpu.workerThreads.map((t) => ({ ...t, of: 'worker' })), ...cpu.serverThreads.map((t) => ({ ...t, of: 'server' }))].filter((t) => t.cores >= 0.9);
  const used =
    `${f(cpu.machine)} of ${cpu.cores} cores busy over ${cpu.seconds.toFixed(0)} s: server ${f(cpu.server)}` +
    (cpu.serverThreads.length > 0 ? ` (threads: ${threads(cpu.serverThreads)})` : '') +
    `, worker ${f(cpu.worker)} (threads: ${threads(cpu.workerThreads)}), ${size.clients} clients in ${size.processes} processes ${f(cpu.clients)}, other work on the machine ${f(cpu.other)}`;
  let verdict: string;
  if (cpu.machine !== null && cpu.other !== null && cpu.other >= Math.max(0, shares[0]!.cores)) {
    verdict = `other work on the machine used more CPU than any part of this run (${cpu.other.toFixed(2)} cores): the run was starved, and no limit of its own can be named from it`;
  } else if (cpu.machine !== null && cpu.machine >= SATURATED * cpu.cores) {
    verdict = `the CPU is saturated and ${shares[0]!.name} takes the largest share (${shares[0]!.cores.toFixed(2)} cores): it is the limit`;
  } else if (hot.length > 0) {
    verdict = `no CPU to spare on one thread: the ${hot[0]!.of}'s ${hot[0]!.name} thread runs at ${hot[0]!.cores.toFixed(2)} of a core, so the ${hot[0]!.of} is the limit`;
  } else if (cpu.machine !== null) {
    verdict = `nothing saturates (the machine is below ${Math.round(SATURATED * 100)}%): the limit is the round trip, each client waiting for its answer; ${shares[0]!.name} is busiest`;
  } else {
    verdict = `the machine's total is unknown here; ${shares[0]!.name} is busiest`;
  }
  return `limit on ${cpu.cores} cores (${kind}): ${used}; ${verdict}`;
}

function problemNotes(size: Size, ours: LoadPhase, bare: LoadPhase, verification: LoadVerification, long: LongPhase, closeFailures: number): string[] {
  const notes: string[] = [];
  for (const phase of [ours, bare]) for (const broken of phase.brokenWriters.slice(0, 3)) notes.push(`${phase.kind}: ${broken}`);
  if (!verification.ok) notes.push(`${verification.problems.length} problem(s) in the load's sessions, first: ${verification.problems.slice(0, 3).join('; ')}`);
  if (!long.verification.ok) notes.push(`the long session: ${long.verification.problems.slice(0, 3).join('; ')}`);
  notes.push(...long.errors.map((error) => `the long session: ${error}`));
  if (verification.taskRetries + long.verification.taskRetries > 0) {
    notes.push(`${verification.taskRetries} workflow tasks failed or timed out in the load's sessions, ${long.verification.taskRetries} in the long session (retried by Temporal)`);
  }
  if (closeFailures > 0) notes.push(`${closeFailures} closes after the load failed`);
  notes.push(
    long.gc
      ? `heapUsed is compared on samples taken right after a full collection of the main thread (every ${size.collectMs / 1000} s during the load, every ${int(size.longWrites / 50)} writes of the long session); rss on every sample (every ${size.sampleMs} ms)`
      : 'no gc could be exposed: heapUsed is compared as sampled, garbage included',
  );
  return notes;
}

function figuresOf(
  size: Size,
  serverPid: number | undefined,
  ours: LoadPhase,
  bare: LoadPhase,
  verification: LoadVerification,
  loadMemory: Drift,
  long: LongPhase,
  longMemory: Drift,
  closeFailures: number,
): Record<string, unknown> {
  const phase = (p: LoadPhase): Record<string, unknown> => {
    const start = p.memory[0]?.at ?? 0;
    return {
      accepted: p.accepted.length,
      errors: p.errors,
      resentWrites: p.retries,
      writesPerSecond: p.writesPerSecond,
      wallMs: p.run.wallMs,
      longestWriterMs: p.run.writeMs,
      latencyMs: p.latency,
      allSessionsOpenAfterMs: p.allOpenAt - start,
      cpuCores: p.cpu,
      memory: { unit: '[seconds since start, rss MiB, heapUsed MiB]', samples: p.memory.map((s) => [round((s.at - start) / 1000), round(s.rss / 2 ** 20), round(s.heapUsed / 2 ** 20)]) },
    };
  };
  return {
    parameters: { ...size, memoryLimit: MEMORY_LIMIT, tailLimit: TAIL_LIMIT, serverPid: serverPid ?? null, writerOrder: 'round-robin' },
    load: {
      ours: { ...phase(ours), verification: { ok: verification.ok, problems: verification.problems.slice(0, 20), accepted: verification.accepted, taskRetries: verification.taskRetries } },
      bare: phase(bare),
      memoryOnceOpen: loadMemory,
      closeFailures,
    },
    long: {
      session: long.session,
      writes: long.writes,
      runs: long.runs,
      failed: long.failed,
      ms: long.ms,
      writesPerSecond: (long.writes * 1000) / long.ms,
      latencyMs: long.latency,
      gcExposed: long.gc,
      verification: { ok: long.verification.ok, problems: long.verification.problems.slice(0, 20), taskRetries: long.verification.taskRetries },
      memory: longMemory,
      samples: { unit: '[writes done, rss MiB, heapUsed MiB]', samples: long.memory.map((s) => [s.tag ?? 0, round(s.rss / 2 ** 20), round(s.heapUsed / 2 ** 20)]) },
    },
  };
}

/** `rss: medians of 40 and 40 samples, heapUsed: of 5 and 5 samples after a collection` */
function memoryBasis(memory: Drift): string {
  return `rss: medians of ${memory.samples.from} and ${memory.samples.to} samples, heapUsed: of ${memory.heapSamples.from} and ${memory.heapSamples.to} samples ${memory.heapBasis}`;
}

function mb(bytes: number): string {
  return `${Math.round(bytes / 2 ** 20)} MB`;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').pop() ?? '';
}
