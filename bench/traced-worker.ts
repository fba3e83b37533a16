/**
 * One session worker in a process of its own, for the benchmark's memory figure: it runs on the
 * task queue `AGENT_SESSIONS_TASK_QUEUE` of `TEMPORAL_ADDRESS`, tracing when the `OTEL_*`
 * variables say so (as `agent-sessions worker` does), prints `ready` once polling, and answers
 * every `memory` line on stdin with one JSON line: its memory after a full garbage collection.
 * Run with `node --expose-gc --import tsx bench/traced-worker.ts`.
 */
import { createInterface } from 'node:readline';
import { loadSettings } from '../src/config';
import { startTracing } from '../src/tracing';
import { createWorker } from '../src/worker';
import { POLICY } from './setup';

async function main(): Promise<void> {
  const settings = loadSettings(process.env);
  const tracing = settings.tracing !== undefined ? await startTracing(settings.tracing, { serviceName: 'bench-worker' }) : undefined;
  const worker = await createWorker({ ...POLICY, temporal: settings.temporal, cacheDir: settings.paths.cacheDir, ...(tracing !== undefined ? { tracing: tracing.worker } : {}) });
  const running = worker.run();
  await worker.registered();
  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() !== 'memory') continue;
    await tracing?.flush();
    const gc = (globalThis as { gc?: () => void }).gc;
    for (let i = 0; i < 3; i++) gc?.();
    const { rss, heapUsed, external } = process.memoryUsage();
    process.stdout.write(`${JSON.stringify({ rss, heapUsed, external, gc: gc !== undefined })}\n`);
  }
  worker.shutdown();
  await running;
  await tracing?.shutdown();
}

void main();
