import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { TodoPolicy } from '../../src/todo';
import { replaySessionHistory } from '../../src/worker';
import { inMemoryTracing } from '../tracing-helpers';

const HISTORIES = join(__dirname, '..', 'histories');
const POLICIES: TodoPolicy[] = [{ allowParallelInProgress: true }, { allowParallelInProgress: false }];
/** Every recorded history that must replay (the `broken-*` ones must fail, and are tested so in replay.test.ts). */
const RECORDED = readdirSync(HISTORIES).filter((file) => file.endsWith('.json') && !file.startsWith('broken-'));

const { tracing, exporter } = inMemoryTracing();

describe('recorded histories with tracing on and off', () => {
  test('there are recorded histories to replay', () => {
    assert.ok(RECORDED.length >= 15, RECORDED.join(', '));
  });

  for (const policy of POLICIES) {
    test(`every recorded history replays the same with tracing on and off (allowParallelInProgress=${policy.allowParallelInProgress})`, async () => {
      for (const file of RECORDED) {
        const text = readFileSync(join(HISTORIES, file), 'utf8');
        const untraced = await replaySessionHistory(text, policy);
        const traced = await replaySessionHistory(text, policy, undefined, { tracing: tracing.worker }).catch((error: Error) => assert.fail(`${file} with tracing on: ${error.message}`));
        assert.deepEqual(traced, untraced, file);
      }
    });
  }

  test('a replay exports no span', async () => {
    await tracing.flush();
    assert.deepEqual(exporter.getFinishedSpans(), []);
  });
});
