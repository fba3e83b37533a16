/**
 * The CLI's start-up: `agent-sessions todos <id> --json` as a whole process (the compiled CLI
 * that `npm ci` builds, as a user runs it) next to a bare script that makes the same query with
 * `@temporalio/client` (bench/bare-todos-query.mjs), alternating, each checked to print the same
 * list. The CLI keeps V8's compiled code between runs (Node's compile cache, enabled in
 * bin/agent-sessions.js); a third process, the bare script with that cache too, shows what the CLI
 * costs when both start alike.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pcts, type MeasurementResult } from './report';
import { calls, todoList, type Bench } from './setup';
import { summarize } from './stats';

const TARGET = 1.1;
const ROOT = join(__dirname, '..');
const run = promisify(execFile);

export async function measureCli(bench: Bench): Promise<MeasurementResult> {
  if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'main.js'))) {
    throw new Error('the cli measurement times the compiled CLI: run `npm run build` first (npm ci does it)');
  }
  const measured = bench.quick ? 5 : 30;
  const warmup = 2;
  const id = bench.id('cli');
  const args = todoList(3, 1);
  await calls(bench).oursWithStart(id, args);
  const expected = JSON.stringify(args.todos);
  const env: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: bench.address, TEMPORAL_NAMESPACE: bench.namespace, AGENT_SESSIONS_TASK_QUEUE: bench.sessionQueue };
  delete env.NODE_OPTIONS; // the bench runs under tsx; the timed processes must not.
  const cachedEnv: NodeJS.ProcessEnv = { ...env, NODE_COMPILE_CACHE: mkdtempSync(join(tmpdir(), 'agent-sessions-bench-compile-cache-')) };
  const timedProcess = async (file: string, argv: string[], withEnv: NodeJS.ProcessEnv = env): Promise<number> => {
    const start = performance.now();
    const { stdout } = await run(process.execPath, [file, ...argv], { cwd: ROOT, env: withEnv });
    const ms = performance.now() - start;
    if (stdout.trim() !== expected) throw new Error(`${file} printed ${stdout.trim().slice(0, 200)}, expected ${expected}`);
    return ms;
  };
  const commands = [
    () => timedProcess(join(ROOT, 'bin', 'agent-sessions.js'), ['todos', id, '--json']),
    () => timedProcess(join(ROOT, 'bench', 'bare-todos-query.mjs'), [id]),
    () => timedProcess(join(ROOT, 'bench', 'bare-todos-query.mjs'), [id], cachedEnv),
  ];
  const samples = { cli: [] as number[], bare: [] as number[], bareCached: [] as number[] };
  for (let i = 0; i < warmup + measured; i++) {
    const order = [0, 1, 2].map((k) => (k + i) % 3);
    const times: number[] = [];
    for (const k of order) times[k] = await commands[k]!();
    if (i < warmup) continue;
    samples.cli.push(times[0]!);
    samples.bare.push(times[1]!);
    samples.bareCached.push(times[2]!);
  }
  await bench.sessions.close(id);
  const cli = summarize(samples.cli);
  const bare = summarize(samples.bare);
  const bareCached = summarize(samples.bareCached);
  const ratio = cli.p50 / bare.p50;
  bench.progress(`cli: todos ${cli.p50.toFixed(0)} ms vs bare script ${bare.p50.toFixed(0)} ms`);
  const notes =
    ratio > TARGET
      ? [
          `agent-sessions todos: ${ratio.toFixed(2)}× the bare script (+${(cli.p50 - bare.p50).toFixed(0)} ms): ` +
            'what the CLI loads beyond @temporalio/client (commander, the settings loader, the client library and its error translation) — ' +
            'see `node --cpu-prof bin/agent-sessions.js todos ID` for where it goes.',
        ]
      : [];
  return {
    name: 'cli',
    title: 'CLI start-up — whole-process ms p50 / p95 / p99; baseline: a bare @temporalio/client script making the same query (the session on a versioned, PINNED worker)',
    rows: [
      { measurement: 'agent-sessions todos --json, 3 items', ours: pcts(cli), baseline: pcts(bare), ratio, target: `≤ ${TARGET}× p50`, met: ratio <= TARGET },
      { measurement: 'the same, vs the bare script with the compile cache too', ours: pcts(cli), baseline: pcts(bareCached), ratio: cli.p50 / bareCached.p50, target: '—', met: null },
    ],
    figures: { parameters: { measured, warmup, target: TARGET }, ms: { cli, bare, bareCached } },
    notes,
  };
}
