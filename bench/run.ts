/**
 * Benchmarks: everything side by side in one run against one Temporal server, each figure next
 * to a bare-workflow baseline taken in the same loop, so the ratios hold on a noisy machine.
 *
 *   npm run bench                      the full run (≥ 500 writes per latency figure; 15–25 min on 2 cores)
 *   npm run bench -- --quick           a smoke run with few iterations
 *   npm run bench -- --only latency,bytes
 *   npm run bench -- --server cluster --only latency,throughput   on PostgreSQL and the Temporal server
 *
 * Measurements: creation, latency, query, http, throughput, replay, bytes, long, listing, tree, cli,
 * release (a session's move to a new build, release promote of idle sessions), scale (thousands of sessions at once: the longest part, minutes),
 * traces (todo_write and a chat turn with tracing unset and exported to a local collector; a worker's memory after 10,000 traced writes),
 * streaming (the model's words to SSE readers: first words, every word once, history per turn, writes while 20 sessions stream),
 * mcp (todo_write as an MCP tools/call over Streamable HTTP next to POST …/todo_write; `agent-sessions mcp` from spawn to tools/list next to `todos --json`),
 * tools (an MCP server's tool called in a turn next to the same call by the MCP SDK's client; a turn's start with three MCP servers next to none, warm and cold).
 * Uses TEMPORAL_ADDRESS when set; otherwise starts its own dev server on free ports with a fresh
 * SQLite file, and stops it at the end. Prints a table on stdout (progress on stderr) and writes
 * bench/results/<ISO time>.json and bench/results/latest.json.
 */
import { parseArgs } from 'node:util';
import { installRuntimeLogging } from '../src/worker/runtime-logging';
import { measureBytes, measureLongSession } from './bytes';
import { measureCli } from './cli';
import { measureCreation } from './creation';
import { measureHttp } from './http';
import { measureLatency, measureQuery } from './latency';
import { measureListing } from './listing';
import { measureMcp } from './mcp';
import { measureReplay } from './replay';
import { machineInfo, renderTable, versions, writeResults, type MeasurementResult } from './report';
import { measureRelease } from './release';
import { measureScale } from './scale';
import { openBench, type Bench, type BenchServer } from './setup';
import { measureStreaming } from './streaming';
import { measureThroughput } from './throughput';
import { measureTools } from './tools';
import { measureTree } from './tree';
import { measureTraces } from './traces';

const MEASUREMENTS: Record<string, (bench: Bench) => Promise<MeasurementResult>> = {
  creation: measureCreation,
  latency: measureLatency,
  query: measureQuery,
  http: measureHttp,
  throughput: measureThroughput,
  replay: measureReplay,
  bytes: measureBytes,
  long: measureLongSession,
  listing: measureListing,
  tree: measureTree,
  cli: measureCli,
  release: measureRelease,
  scale: measureScale,
  traces: measureTraces,
  streaming: measureStreaming,
  mcp: measureMcp,
  tools: measureTools,
};

interface BenchOptions {
  quick: boolean;
  only: string[];
  server: BenchServer;
}

function options(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: { quick: { type: 'boolean', default: false }, only: { type: 'string', multiple: true }, server: { type: 'string', default: 'dev' } },
    strict: true,
  });
  if (values.server !== 'dev' && values.server !== 'cluster') throw new Error(`--server must be dev or cluster, got "${values.server}"`);
  const only = (values.only ?? []).flatMap((value) => value.split(',')).map((name) => name.trim()).filter((name) => name !== '');
  const unknown = only.filter((name) => !(name in MEASUREMENTS));
  if (unknown.length > 0) throw new Error(`unknown measurement ${unknown.map((name) => `"${name}"`).join(', ')}; choose from ${Object.keys(MEASUREMENTS).join(', ')}`);
  return { quick: values.quick, only: only.length > 0 ? only : Object.keys(MEASUREMENTS), server: values.server };
}

async function main(): Promise<number> {
  let settings: BenchOptions;
  try {
    settings = options(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n`);
    return 2;
  }
  installRuntimeLogging('ERROR');
  const startedAt = new Date();
  const progress = (message: string): void => void process.stderr.write(`[${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(4)} s] ${message}\n`);
  const bench = await openBench(settings.quick, progress, settings.server);
  const interrupted = (): void => void bench.close().finally(() => process.exit(130));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const results: MeasurementResult[] = [];
  try {
    for (const name of settings.only) {
      progress(`── ${name}`);
      const start = performance.now();
      const result = await MEASUREMENTS[name]!(bench);
      result.seconds = (performance.now() - start) / 1000;
      results.push(result);
    }
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await bench.close();
  }

  const targets = results.flatMap((result) => result.rows.filter((row) => row.met !== null));
  const met = targets.filter((row) => row.met === true).length;
  const table = renderTable(results);
  process.stdout.write(
    `server: ${bench.server === 'cluster' ? 'the production topology (PostgreSQL and the Temporal server)' : 'the dev server (SQLite)'} at ${bench.address}\n\n` +
      `${table}\n\ntargets met: ${met} of ${targets.length}${settings.quick ? ' (quick run: few iterations, indicative only)' : ''}\n`,
  );
  const file = writeResults(
    {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      mode: settings.quick ? 'quick' : 'full',
      measurements: settings.only,
      machine: machineInfo(),
      versions: await versions(bench.cliPath, bench.serverVersion),
      server: { kind: bench.server, address: bench.address, startedByBench: process.env.TEMPORAL_ADDRESS === undefined, namespace: bench.namespace },
      method:
        'One process runs the client, one session worker and one bare-workflow worker (two of each for the two-worker throughput figures) ' +
        'against one Temporal server. Compared calls alternate in the same loop in a rotating order; warm-up iterations are discarded; ' +
        'latencies are wall-clock per call (performance.now); ratios are ours ÷ baseline.',
      targets: { met, of: targets.length, rows: targets },
      notes: results.flatMap((result) => result.notes.map((note) => `${result.name}: ${note}`)),
      results,
      table,
    },
    startedAt,
  );
  process.stdout.write(`results: ${file}\n`);
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
