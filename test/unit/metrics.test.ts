import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { OutcomeUnknownError, SessionClosedError, TodoRejectedError } from '../../src/client/errors';
import { AgentLoopMetrics, HttpServiceMetrics, METRIC_NAMES, TodoWriteMetrics } from '../../src/metrics';
import { CountedOnce } from '../../src/metrics/counted-once';
import { metricSeries, parseMetrics } from '../helpers';

const series = async (registry: Registry, name: string) => metricSeries(parseMetrics(await registry.metrics()), name);
const refused = () => new TodoRejectedError('todo_write rejected: … [duplicate-content]', 'duplicate-content', []);

test('a key counts the first time only, and the last 10,000 keys are always remembered', () => {
  const counted = new CountedOnce();
  assert.equal(counted.first('a'), true);
  assert.equal(counted.first('a'), false);
  for (let i = 0; i < 25_000; i++) assert.equal(counted.first(`k${i}`), true);
  for (let i = 15_000; i < 25_000; i++) assert.equal(counted.first(`k${i}`), false, `k${i} was forgotten`);
  assert.equal(counted.first('a'), true, 'a key older than 20,000 others is forgotten: the memory is bounded');
});

test("todo_write answers are counted by result and rule, once per update id and result; errors that are no session's answer are not", async () => {
  const registry = new Registry();
  const writes = new TodoWriteMetrics(registry);
  assert.equal(await writes.count('w1', async () => 'applied'), 'applied');
  await writes.count('w1', async () => 'applied again, deduped by the server');
  await assert.rejects(writes.count('w2', async () => Promise.reject(refused())), TodoRejectedError);
  await assert.rejects(writes.count('w2', async () => Promise.reject(refused())), TodoRejectedError);
  await assert.rejects(writes.count('w3', async () => Promise.reject(new SessionClosedError('s'))), SessionClosedError);
  const unknown = new OutcomeUnknownError('s', 'w4', 10);
  await assert.rejects(writes.count('w4', async () => Promise.reject(unknown)), (error) => error === unknown);
  // Sent again under its id and answered this time: counted once, by that answer.
  await writes.count('w4', async () => 'applied');
  assert.deepEqual(await series(registry, METRIC_NAMES.todoWrites), [
    { labels: { result: 'accepted' }, value: 2 },
    { labels: { result: 'rejected', rule: 'duplicate-content' }, value: 1 },
    { labels: { result: 'rejected', rule: 'session-closed' }, value: 1 },
  ]);
});

test('the worker and the HTTP service can share one registry: the todo_write counter is one', async () => {
  const registry = new Registry();
  const worker = new AgentLoopMetrics(registry);
  const http = new HttpServiceMetrics(registry);
  await worker.todoWrites.count('tool:1', async () => 'ok');
  await http.todoWrites.count('http:1', async () => 'ok');
  assert.deepEqual(await series(registry, METRIC_NAMES.todoWrites), [{ labels: { result: 'accepted' }, value: 2 }]);
});

test('a turn counts once per ending activity, with its duration when its start is known', async () => {
  const registry = new Registry();
  const metrics = new AgentLoopMetrics(registry);
  metrics.turnEnded('run:7', 'completed', 12.5);
  metrics.turnEnded('run:7', 'completed', 12.5);
  metrics.turnEnded('run:9', 'interrupted', undefined);
  assert.deepEqual(await series(registry, METRIC_NAMES.turns), [
    { labels: { outcome: 'completed' }, value: 1 },
    { labels: { outcome: 'interrupted' }, value: 1 },
  ]);
  assert.deepEqual(await series(registry, `${METRIC_NAMES.turnDuration}_sum`), [{ labels: { outcome: 'completed' }, value: 12.5 }]);
});
