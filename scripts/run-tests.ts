/**
 * `npm test`: starts one Temporal dev server for the whole run (free ports, a fresh SQLite
 * file, no UI), runs every test file with node's test runner against it, stops it, and exits
 * with the runner's code. The first run on a machine builds the Temporal CLI (see README).
 *
 * Arguments, if any, replace the default file list: `npm test -- test/unit/todo-fold.test.ts`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { findFreePort, findTemporalCli, startDevServer } from '../src/devserver';

const ROOT = join(__dirname, '..');
const SUITES = ['test/unit', 'test/integration', 'test/replay', 'test/bad-input', 'test/faults', 'test/browser'];

function testFiles(): string[] {
  return SUITES.flatMap((dir) =>
    readdirSync(join(ROOT, dir))
      .filter((name) => name.endsWith('.test.ts'))
      .sort()
      .map((name) => join(dir, name)),
  );
}

async function main(): Promise<number> {
  const files = process.argv.length > 2 ? process.argv.slice(2) : testFiles();
  const started = Date.now();
  const cli = await findTemporalCli();
  process.stderr.write(`temporal CLI: ${cli}\n`);
  const port = await findFreePort();
  const output = join(ROOT, 'test-output');
  mkdirSync(output, { recursive: true });
  const server = await startDevServer({
    port,
    uiPort: false,
    stdio: 'ignore',
    dbFile: join(mkdtempSync(join(tmpdir(), 'agent-sessions-tests-')), 'temporal.sqlite'),
  });
  process.stderr.write(`Temporal dev server for the tests at ${server.address} (ready in ${Date.now() - started} ms)\n`);
  try {
    return await new Promise<number>((resolve) => {
      const runner = spawn(
        process.execPath,
        ['--import', 'tsx', '--test', '--test-concurrency=2', ...files.map((file) => relative(ROOT, join(ROOT, file)))],
        {
          cwd: ROOT,
          stdio: 'inherit',
          env: { ...process.env, TEMPORAL_ADDRESS: server.address, TEMPORAL_CLI_PATH: cli, TEST_OUTPUT_DIR: output },
        },
      );
      const forward = (signal: NodeJS.Signals): void => void runner.kill(signal);
      process.on('SIGINT', forward);
      process.on('SIGTERM', forward);
      runner.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
  } finally {
    await server.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`npm test could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
