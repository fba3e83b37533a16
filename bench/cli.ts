/**
 * The CLI's start-up: `agent-sessions todos <id> --json` as a whole process (the compiled CLI
 * that `npm ci` builds, as a user runs it) next to a bare script that makes the same query with
 * `@temporalio/client` (bench/bare-todos-query.mjs), alternating, each checked to print the same
 * list.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
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
  const timedProcess = async (file: string, argv: string[]): Promise<number> => {
    const start = performance.now();
    const { stdout } = await run(process.execPath, [file, ...argv], { cwd: ROOT, env });
    const ms = performance.now() - start;
    if (stdout.trim() !== expected) throw new Error(`${file} printed ${stdout.trim().slice(0, 200)}, expected ${expected}`);
    return ms;
  };
  const commands = [
    () => timedProcess(join(ROOT, 'bin', 'agent-sessions.js'), ['todos', id, '--json']),
    () => timedProcess(join(ROOT, 'bench', 'bare-todos-query.mjs'), [id]),
  ];
  const samples = { cli: [] as number[], bare: [] as number[] };
  for (let i = 0; i < warmup + measured; i++) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    const times: number[] = [];
    for (const k of order) times[k] = await commands[k]!();
    if (i < warmup) continue;
    samples.cli.push(times[0]!);
    samples.bare.push(times[1]!);
  }
  await bench.sessions.close(id);
  const cli = summarize(samples.cli);
  const bare = summarize(samples.bare);
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
    rows: [{ measurement: 'agent-sessions todos --json, 3 items', ours: pcts(cli), baseline: pcts(bare), ratio, target: `≤ ${TARGET}× p50`, met: ratio <= TARGET }],
    figures: { parameters: { measured, warmup, target: TARGET }, ms: { cli, bare } },
    notes,
  };
}
