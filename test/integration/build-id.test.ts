import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startWorkerProcess } from '../faults/fault-helpers';
import { temporalAddress, uniqueId } from '../helpers';

/** Starts `agent-sessions worker` with its cache in `cacheDir`, reads the build id it prints once polling, and kills it. */
async function buildIdOfWorker(cacheDir: string): Promise<string> {
  const worker = await startWorkerProcess(await temporalAddress(), uniqueId('build-id'), 120_000, { AGENT_SESSIONS_CACHE_DIR: cacheDir });
  try {
    const printed = /worker polling task queue .*, build (b[0-9a-f]{12})/.exec(worker.output());
    assert.ok(printed !== null, `the worker names its build when it starts polling: ${worker.output()}`);
    return printed[1]!;
  } finally {
    await worker.kill();
  }
}

// Sessions are pinned to the build that started them: a worker restarted on the same code must
// serve that build again, or the pinned sessions' tasks wait for a worker that never comes.
test('a worker that built its workflow bundle and one that found it cached compute one build id', { timeout: 300_000 }, async () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'agent-sessions-build-id-'));
  try {
    const built = await buildIdOfWorker(cacheDir);
    const bundles = join(cacheDir, 'bundles');
    assert.ok(existsSync(bundles) && readdirSync(bundles).some((name) => name.endsWith('.json')), 'the first worker built the bundle and cached it');
    const cached = await buildIdOfWorker(cacheDir);
    assert.equal(cached, built);
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
});
