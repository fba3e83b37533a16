/**
 * Scale on one machine: many sessions written at once by several client processes
 * (`scripts/load-writer.ts`) through one or more in-process workers on one task queue, then
 * every session checked (`scripts/verify-load.ts`): its final list is its last accepted write,
 * and no accepted write is lost or doubled. Prints a table; exits 1 when a check fails.
 *
 * Run: npx tsx scripts/scale.ts [--sessions 50] [--writers 4] [--writes 20] [--workers 1|2] [--concurrency 32]
 * Uses TEMPORAL_ADDRESS when set; otherwise starts its own dev server on free ports with a
 * fresh SQLite file, and stops it at the end.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SessionClient } from '../src/client';
import { loadSettings } from '../src/config';
import { findFreePort, startDevServer, type DevServerHandle } from '../src/devserver';
import { createWorker, type SessionWorker } from '../src/worker';
import { runLoadWriters, verifyLoad, writesPerSecond } from '../bench/load/verify-load';

interface ScaleSettings {
  sessions: number;
  writers: number;
  writes: number;
  workers: number;
  concurrency: number;
}

function settingsFrom(argv: string[]): ScaleSettings {
  const { values } = parseArgs({
    args: argv,
    options: {
      sessions: { type: 'string', default: '50' },
      writers: { type: 'string', default: '4' },
      writes: { type: 'string', default: '20' },
      workers: { type: 'string', default: '1' },
      concurrency: { type: 'string', default: '32' },
    },
    strict: true,
  });
  const int = (name: keyof typeof values): number => {
    const raw = values[name];
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got "${raw}"`);
    return value;
  };
  return { sessions: int('sessions'), writers: int('writers'), writes: int('writes'), workers: int('workers'), concurrency: int('concurrency') };
}

function table(rows: Array<Record<string, string | number>>): string {
  const keys = Object.keys(rows[0] ?? {});
  const width = (key: string): number => Math.max(key.length, ...rows.map((row) => String(row[key]).length));
  const line = (cells: string[]): string => cells.map((cell, k) => cell.padStart(width(keys[k]!))).join('  ');
  return [line(keys), line(keys.map((key) => '-'.repeat(width(key)))), ...rows.map((row) => line(keys.map((key) => String(row[key]))))].join('\n');
}

async function main(): Promise<number> {
  let settings: ScaleSettings;
  try {
    settings = settingsFrom(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`scale: ${(error as Error).message}\n`);
    return 2;
  }
  let server: DevServerHandle | undefined;
  const workers: Array<{ worker: SessionWorker; running: Promise<void> }> = [];
  let client: SessionClient | undefined;
  const stopAll = async (): Promise<void> => {
    await client?.closeConnection();
    for (const { worker } of workers) worker.shutdown();
    await Promise.allSettled(workers.map(({ running }) => running));
    await server?.stop();
  };
  const interrupted = (): void => void stopAll().finally(() => process.exit(130));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  try {
    const { addressGiven, ...temporal } = loadSettings(process.env).temporal;
    let address = temporal.address;
    if (!addressGiven) {
      process.stderr.write('TEMPORAL_ADDRESS is not set: starting a dev server for this run…\n');
      server = await startDevServer({
        port: await findFreePort(),
        uiPort: false,
        stdio: 'ignore',
        dbFile: join(mkdtempSync(join(tmpdir(), 'agent-sessions-scale-')), 'temporal.sqlite'),
      });
      address = server.address;
    }
    const taskQueue = `scale-${randomUUID().slice(0, 8)}`;
    for (let n = 0; n < settings.workers; n++) {
      const worker = await createWorker({ allowParallelInProgress: true, temporal: { ...temporal, address, taskQueue } });
      workers.push({ worker, running: worker.run() });
    }
    await Promise.all(workers.map(({ worker }) => worker.registered()));
    client = await SessionClient.connect({ ...temporal, address, taskQueue });
    process.stderr.write(
      `${settings.writers} writers × ${settings.sessions} sessions × ${settings.writes} writes through ${settings.workers} worker(s) at ${address}, task queue ${taskQueue}…\n`,
    );

    const run = await runLoadWriters({
      prefix: `scale-${randomUUID().slice(0, 8)}`,
      sessions: settings.sessions,
      writers: settings.writers,
      writes: settings.writes,
      concurrency: settings.concurrency,
      address,
      taskQueue,
    });
    const broken = run.exits.filter((exit) => exit.code !== 0 || exit.report === undefined);
    for (const exit of broken) {
      process.stderr.write(`writer ${exit.writer} exited with ${exit.code ?? exit.signal}${exit.report === undefined ? ' and printed no report' : ''}:\n${exit.stderr.trimEnd()}\n`);
    }
    const verification = await verifyLoad(client, run.sessions, run.reports, { expectedPerSession: settings.writers * settings.writes });
    const verified = verification.ok && broken.length === 0;

    process.stdout.write(
      `${table([
        {
          sessions: settings.sessions,
          writers: settings.writers,
          writes: verification.accepted,
          workers: settings.workers,
          elapsed: `${(run.writeMs / 1000).toFixed(2)} s`,
          'writes/s': writesPerSecond(verification.accepted, run.writeMs),
          verified: verified ? 'yes' : 'no',
        },
      ])}\n`,
    );
    process.stdout.write(
      `(elapsed: the longest writer's writing time; ${(run.wallMs / 1000).toFixed(2)} s with process start-up; ` +
        `${verification.retries} retried sends, ${verification.failed} failed writes, ` +
        `${verification.taskRetries} failed or timed-out workflow tasks)\n`,
    );
    if (!verification.ok) {
      process.stderr.write(`${verification.problems.length} problem(s):\n`);
      for (const problem of verification.problems.slice(0, 50)) process.stderr.write(`  ${problem}\n`);
      if (verification.problems.length > 50) process.stderr.write(`  … and ${verification.problems.length - 50} more\n`);
    }
    return verified ? 0 : 1;
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await stopAll();
  }
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`scale: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
