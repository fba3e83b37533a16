import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(__dirname, '..', '..');

test('stopping a child that keeps no process alive holds its caller until the child is gone', async () => {
  // Before, nothing held the event loop while the child stopped: the caller's process ended with
  // code 0 before stop() resolved (the cluster run lost its failures that way, after Jaeger's stop).
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'fixtures', 'stop-unreferenced-child.ts')], { cwd: ROOT, timeout: 30_000 }, (error, out, err) =>
      error !== null ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
    );
  });
  assert.match(stdout, /^stopped: \{"code":0,"signal":null\}$/m);
});
