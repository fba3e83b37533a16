/**
 * Where a load's machine time and the worker's memory go, for the benchmark's scale measurement:
 * this process's memory sampled on a timer ({@link sampleMemory}), and CPU time split between
 * this process (the worker), its reaped child processes (the load writers), the Temporal dev
 * server (another child, found by its port) and everything else on the machine
 * ({@link cpuSnapshot}, {@link cpuBetween}). The CPU figures read Linux's /proc; elsewhere only
 * this process's own time is known.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** One `process.memoryUsage()` reading, in bytes, with its wall-clock time and an optional tag (e.g. writes done). */
export interface MemorySample {
  at: number;
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  tag?: number;
  /** Taken right after a full collection of this thread's heap. */
  collected?: boolean;
}

/** A running memory sampler. */
export interface MemorySampler {
  /** Takes one sample now (kept with the timed ones). */
  sample(): MemorySample;
  /** Stops the timer and returns every sample, oldest first. */
  stop(): MemorySample[];
}

/** How {@link sampleMemory} samples. */
export interface SamplerOptions {
  intervalMs: number;
  /** Read into each sample's `tag` (e.g. the writes done so far). */
  tag?: () => number;
  /** Also collect garbage (with `gc`) and sample right after, every this many ms. */
  collectEveryMs?: number;
  gc?: () => void;
  onSample?: (sample: MemorySample) => void;
}

/** Samples this process's memory every `intervalMs`, and after a collection every `collectEveryMs`. */
export function sampleMemory(options: SamplerOptions): MemorySampler {
  const samples: MemorySample[] = [];
  const sample = (collected = false): MemorySample => {
    const usage = process.memoryUsage();
    const taken: MemorySample = { at: Date.now(), rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers };
    if (options.tag !== undefined) taken.tag = options.tag();
    if (collected) taken.collected = true;
    samples.push(taken);
    options.onSample?.(taken);
    return taken;
  };
  const collect = (): MemorySample => {
    options.gc?.();
    return sample(options.gc !== undefined);
  };
  const timers = [setInterval(() => sample(), options.intervalMs)];
  if (options.collectEveryMs !== undefined && options.gc !== undefined) timers.push(setInterval(collect, options.collectEveryMs));
  sample();
  return {
    sample: collect,
    stop() {
      for (const timer of timers) clearInterval(timer);
      return samples;
    },
  };
}

/**
 * This thread's full garbage collection: `global.gc` when node runs with `--expose-gc`, otherwise
 * the same function taken from a context made while the flag is briefly on (the flag is turned
 * off again at once, so workflow contexts made later do not see a `gc`); `undefined` when neither works.
 */
export function exposeGc(): (() => void) | undefined {
  const existing = (globalThis as { gc?: unknown }).gc;
  if (typeof existing === 'function') return existing as () => void;
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('typeof gc === "function" ? gc : undefined');
    setFlagsFromString('--no-expose-gc');
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

/** Fields of a /proc/<pid>/stat line after `pid (comm)`: index 0 is field 3 (state). */
function statFields(path: string): { comm: string; rest: string[] } | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    const open = text.indexOf('(');
    const close = text.lastIndexOf(')');
    return { comm: text.slice(open + 1, close), rest: text.slice(close + 2).trim().split(/\s+/) };
  } catch {
    return undefined;
  }
}

let ticks: number | undefined;
/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, 100 when unknown). */
function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** utime + stime (fields 14, 15) of a /proc stat file, in seconds. */
/** CPU seconds (user and system, every thread) process `pid` has used so far, or `undefined` when it cannot be read. */
export function processCpuSeconds(pid: number): number | undefined {
  return cpuSecondsOf(`/proc/${pid}/stat`);
}

function cpuSecondsOf(path: string): number | undefined {
  const fields = statFields(path);
  return fields === undefined ? undefined : (Number(fields.rest[11]) + Number(fields.rest[12])) / clockTicks();
}

/** CPU seconds of each thread of `pid`, summed by thread name. */
function threadSeconds(pid: number | 'self'): Map<string, number> {
  const byName = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tids) {
    const fields = statFields(`/proc/${pid}/task/${tid}/stat`);
    if (fields === undefined) continue;
    byName.set(fields.comm, (byName.get(fields.comm) ?? 0) + (Number(fields.rest[11]) + Number(fields.rest[12])) / clockTicks());
  }
  return byName;
}

/**
 * The pid of the Temporal dev server this process started: its `temporal server start-dev`
 * child listening on `address`'s port, or its `temporal-server … start` child; `undefined` when
 * there is no /proc, or the server was not started by this process.
 */
export function findDevServerPid(address: string): number | undefined {
  const port = address.split(':').pop() ?? '';
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    const fields = statFields(`/proc/${entry}/stat`);
    if (fields === undefined || Number(fields.rest[1]) !== process.pid) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const at = args.indexOf('--port');
    if (args.includes('start-dev') && at >= 0 && args[at + 1] === port) return Number(entry);
    // The server built from the Go module proxy takes its ports from its configuration: the only one this process started is it.
    if (/(^|\/)temporal-server[^/]*$/.test(args[0] ?? '') && args.includes('start')) return Number(entry);
  }
  return undefined;
}

/** CPU counters at one moment. */
export interface CpuSnapshot {
  at: number;
  /** This process, every thread (process.cpuUsage), in microseconds. */
  self: NodeJS.CpuUsage;
  /** CPU seconds of this process's children that have exited and been reaped (cutime + cstime). */
  reapedChildren: number | undefined;
  /** CPU seconds of the server process. */
  server: number | undefined;
  /** The machine's busy and total CPU seconds over all cores (/proc/stat). */
  machine: { busy: number; total: number } | undefined;
  selfThreads: Map<string, number>;
  serverThreads: Map<string, number>;
}

function machineSeconds(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = values.reduce((sum, value) => sum + value, 0);
    const idle = values[3]! + values[4]!;
    return { busy: (total - idle) / clockTicks(), total: total / clockTicks() };
  } catch {
    return undefined;
  }
}

/** Reads every counter now. */
export function cpuSnapshot(serverPid: number | undefined): CpuSnapshot {
  const self = statFields('/proc/self/stat');
  return {
    at: performance.now(),
    self: process.cpuUsage(),
    reapedChildren: self === undefined ? undefined : (Number(self.rest[13]) + Number(self.rest[14])) / clockTicks(),
    server: serverPid === undefined ? undefined : cpuSecondsOf(`/proc/${serverPid}/stat`),
    machine: machineSeconds(),
    selfThreads: threadSeconds('self'),
    serverThreads: serverPid === undefined ? new Map() : threadSeconds(serverPid),
  };
}

/** Cores busy on average between two snapshots (CPU seconds ÷ wall seconds); `null` where unknown. */
export interface CpuUse {
  seconds: number;
  /** Cores of the machine. */
  cores: number;
  worker: number;
  clients: number | null;
  server: number | null;
  /** The whole machine. */
  machine: number | null;
  /** The machine less the three above (other work on the machine, the kernel's share included). */
  other: number | null;
  /** The busiest threads (by name) of this process and of the server, most first. */
  workerThreads: Array<{ name: string; cores: number }>;
  serverThreads: Array<{ name: string; cores: number }>;
}

function busiest(before: Map<string, number>, after: Map<string, number>, seconds: number): Array<{ name: string; cores: number }> {
  return [...after]
    .map(([name, value]) => ({ name, cores: (value - (before.get(name) ?? 0)) / seconds }))
    .filter((thread) => thread.cores > 0.005)
    .sort((a, b) => b.cores - a.cores)
    .slice(0, 4);
}

/** What was used between `before` and `after`. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): CpuUse {
  const seconds = (after.at - before.at) / 1000;
  const per = (a: number | undefined, b: number | undefined): number | null => (a === undefined || b === undefined ? null : (b - a) / seconds);
  const worker = (after.self.user + after.self.system - before.self.user - before.self.system) / 1e6 / seconds;
  const clients = per(before.reapedChildren, after.reapedChildren);
  const server = per(before.server, after.server);
  const machine = per(before.machine?.busy, after.machine?.busy);
  const cores = before.machine !== undefined && after.machine !== undefined && machine !== null ? Math.round((after.machine.total - before.machine.total) / seconds) : cpus().length;
  const other = machine === null ? null : Math.max(0, machine - worker - (clients ?? 0) - (server ?? 0));
  return {
    seconds,
    cores,
    worker,
    clients,
    server,
    machine,
    other,
    workerThreads: busiest(before.selfThreads, after.selfThreads, seconds),
    serverThreads: busiest(before.serverThreads, after.serverThreads, seconds),
  };
}
