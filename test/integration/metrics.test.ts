import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInboundCallsInterceptor } from '@temporalio/worker';
import { Registry } from 'prom-client';
import type { SessionClient } from '../../src/client';
import { startHttpServer, type HttpServer } from '../../src/http/server';
import { METRIC_NAMES } from '../../src/metrics';
import { startModelServer, type ModelServer, type ScriptJson } from '../../src/model-server';
import { connectClient, httpCall, metricSeries, parseMetrics, runCli, spawnCli, todo, uniqueId, until, useTestBed, type MetricSample } from '../helpers';

// Each process serves what it counts: the HTTP service its own writes and requests at /metrics
// (behind its token), the worker the agent loop's writes, model calls, tokens and turns beside
// Temporal's own temporal_* metrics at --metrics-port. Every value is asserted exactly.

const MODEL = 'metrics-model';
const MESSAGE = 'Plan the release';
const ANSWER = 'The plan is written.';
const TOKEN = 'metrics-test-token';
const PLAN = [todo('Write the changelog', 'in_progress'), todo('Tag the release', 'pending')];

/** One turn: an accepted write, a rejected one (a repeated item, refused under any policy), the answer. */
const script: ScriptJson = {
  model: MODEL,
  policy: { allowParallelInProgress: true },
  conversations: [
    {
      name: 'plan',
      match: { firstUserMessage: `^${MESSAGE}$` },
      steps: [
        { respond: { tool_calls: [{ name: 'todo_write', arguments: { todos: PLAN } }] } },
        {
          expect: { lastMessage: { role: 'tool', contentMatches: '^Updated todo list: 1 pending, 1 in progress, 0 completed' } },
          respond: { tool_calls: [{ name: 'todo_write', arguments: { todos: [PLAN[0], PLAN[0]] }, expectRejected: true }] },
        },
        { expect: { lastMessage: { role: 'tool', contentMatches: '\\[duplicate-content\\]' } }, respond: { content: ANSWER } },
      ],
    },
  ],
};

const WRITES = [
  { labels: { result: 'accepted' }, value: 1 },
  { labels: { result: 'rejected', rule: 'duplicate-content' }, value: 1 },
];

/** Sends the scripted message and waits for its turn to end; answers how long that took, in seconds. */
async function chat(client: SessionClient, id: string): Promise<number> {
  const began = Date.now();
  await client.sendMessage(id, MESSAGE);
  // A worker that replays on every task may answer a query late on a busy machine: ask again.
  const ended = await until('the turn to end', async () => (await client.session(id)).agent.lastTurn ?? undefined, 60_000, { ignoreErrors: true });
  assert.equal(ended.reason, 'completed', ended.detail ?? '');
  assert.equal(ended.answer, ANSWER);
  return (Date.now() - began) / 1000;
}

/**
 * Asserts the agent loop's counts of one scripted turn, exactly: two writes (one accepted, one
 * rejected by its rule), three model calls with the tokens the session's usage holds, one
 * completed turn lasting at most `turnSeconds`.
 */
function assertAgentCounts(samples: MetricSample[], usage: { prompt_tokens: number; completion_tokens: number }, turnSeconds: number): void {
  const call = { model: MODEL, outcome: 'ok' };
  assert.deepEqual(metricSeries(samples, METRIC_NAMES.todoWrites), WRITES);
  assert.deepEqual(metricSeries(samples, METRIC_NAMES.modelCalls), [{ labels: call, value: 3 }]);
  assert.deepEqual(metricSeries(samples, `${METRIC_NAMES.modelCallDuration}_count`), [{ labels: call, value: 3 }]);
  assert.deepEqual(metricSeries(samples, METRIC_NAMES.modelTokens), [
    { labels: { kind: 'input', model: MODEL }, value: usage.prompt_tokens },
    { labels: { kind: 'output', model: MODEL }, value: usage.completion_tokens },
  ]);
  assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0, 'the scripted model reports tokens');
  assert.deepEqual(metricSeries(samples, METRIC_NAMES.turns), [{ labels: { outcome: 'completed' }, value: 1 }]);
  assert.deepEqual(metricSeries(samples, `${METRIC_NAMES.turnDuration}_count`), [{ labels: { outcome: 'completed' }, value: 1 }]);
  const [turnSum] = metricSeries(samples, `${METRIC_NAMES.turnDuration}_sum`);
  assert.ok(turnSum !== undefined && turnSum.value > 0 && turnSum.value <= turnSeconds + 1, `turn duration ${turnSum?.value} s of a turn seen to take ${turnSeconds} s`);
  // Each histogram's +Inf bucket holds every observation.
  assert.deepEqual(metricSeries(samples, `${METRIC_NAMES.turnDuration}_bucket`).find((s) => s.labels['le'] === '+Inf')?.value, 1);
}

describe('a worker process and the HTTP service, each scraped', () => {
  const taskQueue = uniqueId('metrics');
  let model: ModelServer;
  let worker: Awaited<ReturnType<typeof spawnCli>>;
  let workerMetrics: string;
  let client: SessionClient;
  let http: HttpServer;

  before(async () => {
    model = await startModelServer({ script });
    worker = await spawnCli(['worker', '--allow-parallel-in-progress', 'true', '--metrics-port', '0'], {
      AGENT_SESSIONS_TASK_QUEUE: taskQueue,
      OPENAI_BASE_URL: model.url,
      AGENT_SESSIONS_MODEL: MODEL,
      // The turn ends at the answer, open todos or not: no reminder, no fourth call.
      AGENT_SESSIONS_NUDGE: 'false',
    });
    const started = worker;
    workerMetrics = await until('the worker to poll and say where its metrics are', () => /^worker polling .*; metrics at (http:\S+)$/m.exec(started.output())?.[1], 120_000).catch(
      (error: Error) => {
        throw new Error(`${error.message}; the worker printed:\n${started.output()}`);
      },
    );
    client = await connectClient(taskQueue);
    http = await startHttpServer({ client, port: 0, token: TOKEN });
  });

  after(async () => {
    await http?.close();
    await client?.closeConnection();
    if (worker !== undefined && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await model?.close();
  });

  const bearer = { Authorization: `Bearer ${TOKEN}` };
  const scrapeHttp = async (): Promise<MetricSample[]> => {
    const answer = await fetch(`${http.url}/metrics`, { headers: bearer });
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parseMetrics(await answer.text());
  };

  test('GET /metrics is refused without the token, or with another one, when a token is set', async () => {
    for (const headers of [{}, { Authorization: 'Bearer not-the-token' }]) {
      const answer = await httpCall(http.url, 'GET', '/metrics', undefined, headers);
      assert.equal(answer.status, 401, JSON.stringify(answer.json));
      assert.equal(answer.json.code, 'unauthorized');
    }
  });

  test('the HTTP service counts its own writes (accepted, rejected by rule) and its requests by route template, never by path', async () => {
    const id = uniqueId('http-writes');
    const path = `/sessions/${encodeURIComponent(id)}/todo_write`;
    assert.equal((await httpCall(http.url, 'POST', path, { todos: PLAN }, bearer)).status, 200);
    const refused = await httpCall(http.url, 'POST', path, { todos: [PLAN[0], PLAN[0]] }, bearer);
    assert.equal(refused.status, 422);
    assert.equal(refused.json.rule, 'duplicate-content');
    // The same write sent again under its Idempotency-Key: the session applies it once, and it counts once.
    const key = { ...bearer, 'Idempotency-Key': uniqueId('key') };
    assert.equal((await httpCall(http.url, 'POST', path, { todos: [PLAN[1]] }, key)).status, 200);
    assert.equal((await httpCall(http.url, 'POST', path, { todos: [PLAN[1]] }, key)).status, 200);
    assert.equal((await httpCall(http.url, 'POST', path, { todos: PLAN })).status, 401);
    assert.equal((await httpCall(http.url, 'GET', `/no/such/${id}`, undefined, bearer)).status, 404);

    const samples = await scrapeHttp();
    assert.deepEqual(metricSeries(samples, METRIC_NAMES.todoWrites), [
      { labels: { result: 'accepted' }, value: 2 },
      { labels: { result: 'rejected', rule: 'duplicate-content' }, value: 1 },
    ]);
    const requests = metricSeries(samples, `${METRIC_NAMES.httpRequestDuration}_count`);
    const count = (route: string, method: string, status: number) =>
      requests.find((s) => s.labels['route'] === route && s.labels['method'] === method && s.labels['status'] === String(status))?.value;
    assert.equal(count('/sessions/{id}/todo_write', 'POST', 200), 3);
    assert.equal(count('/sessions/{id}/todo_write', 'POST', 422), 1);
    assert.equal(count('/sessions/{id}/todo_write', 'POST', 401), 1);
    assert.equal(count('unmatched', 'GET', 404), 1);
    for (const sample of samples) assert.ok(!JSON.stringify(sample.labels).includes(id), `a label holds the session id: ${JSON.stringify(sample)}`);
    // What the worker counts is not the HTTP service's to serve.
    assert.deepEqual(metricSeries(samples, METRIC_NAMES.modelCalls), []);
    assert.ok(!samples.some((s) => s.name.startsWith('temporal_')));
  });

  test("the worker's --metrics-port serves Temporal's temporal_* metrics and the agent loop's writes, model calls, tokens and turns", { timeout: 120_000 }, async () => {
    const id = uniqueId('agent');
    const turnSeconds = await chat(client, id);
    const answer = await fetch(workerMetrics);
    assert.equal(answer.status, 200);
    const text = await answer.text();
    const samples = parseMetrics(text);
    assertAgentCounts(samples, (await client.usage(id)).session, turnSeconds);
    // Temporal's own: task latencies and failures, by the SDK's names.
    for (const name of ['temporal_workflow_task_schedule_to_start_latency_bucket', 'temporal_activity_execution_latency_bucket', 'temporal_workflow_task_execution_latency_count']) {
      assert.ok(samples.some((s) => s.name === name && s.labels['task_queue'] === taskQueue), `${name} on task queue ${taskQueue} in:\n${text.slice(0, 2000)}`);
    }
    // The HTTP service's requests are not the worker's.
    assert.deepEqual(metricSeries(samples, `${METRIC_NAMES.httpRequestDuration}_count`), []);
    // The HTTP service counted none of the agent's writes: they went from the worker to the session.
    assert.deepEqual(metricSeries(await scrapeHttp(), METRIC_NAMES.todoWrites), [
      { labels: { result: 'accepted' }, value: 2 },
      { labels: { result: 'rejected', rule: 'duplicate-content' }, value: 1 },
    ]);
    const missing = await fetch(workerMetrics.replace(/\/metrics$/, '/other'));
    assert.equal(missing.status, 404);
  });

  test('a malformed or taken --metrics-port is refused before the worker starts, naming the flag and the value', async () => {
    const malformed = await runCli(['worker', '--allow-parallel-in-progress', 'true', '--metrics-port', 'nine']);
    assert.equal(malformed.code, 2, malformed.stderr);
    assert.match(malformed.stderr, /--metrics-port must be an integer from 0 to 65535 \(0: any free port\), got "nine"/);
    const taken = new URL(workerMetrics).port;
    const busy = await runCli(['worker', '--allow-parallel-in-progress', 'true', '--metrics-port', taken], { env: { AGENT_SESSIONS_TASK_QUEUE: taskQueue } });
    assert.equal(busy.code, 2, busy.stderr);
    assert.match(busy.stderr, new RegExp(`--metrics-port ${taken} cannot be served on 127\\.0\\.0\\.1 \\(EADDRINUSE\\)`));
    const fromEnv = await runCli(['worker', '--allow-parallel-in-progress', 'true'], { env: { AGENT_SESSIONS_METRICS_PORT: '70000' } });
    assert.equal(fromEnv.code, 2, fromEnv.stderr);
    assert.match(fromEnv.stderr, /AGENT_SESSIONS_METRICS_PORT must be an integer from 0 to 65535 \(0: any free port\), got "70000"/);
  });
});

describe('a worker that replays on every task (maxCachedWorkflows: 0)', () => {
  const registry = new Registry();
  const bed = useTestBed('metrics-replay', { allowParallelInProgress: true }, {
    model: { script },
    worker: { maxCachedWorkflows: 0, metrics: registry, agent: { model: MODEL, nudge: false } },
  });

  test('counts the turn exactly as a caching worker does: replaying workflow code counts nothing again', { timeout: 120_000 }, async () => {
    const id = uniqueId('replayed');
    const turnSeconds = await chat(bed.client, id);
    assertAgentCounts(parseMetrics(await registry.metrics()), (await bed.client.usage(id)).session, turnSeconds);
  });
});

describe('activities retried after they did their work', () => {
  const registry = new Registry();
  const retried: string[] = [];
  // The completion of a write's (and of the turn's end's) first attempt is "lost": the activity
  // ran, then fails, and Temporal runs it again.
  const loseFirstCompletion = (): { inbound: ActivityInboundCallsInterceptor } => ({
    inbound: {
      async execute(input, next) {
        const info = Context.current().info;
        const result = await next(input);
        if ((info.activityType === 'writeTodos' || info.activityType === 'endTurn') && info.attempt === 1) {
          retried.push(info.activityType);
          throw ApplicationFailure.retryable('the completion was lost', 'LostCompletion');
        }
        return result;
      },
    },
  });
  const bed = useTestBed('metrics-retry', { allowParallelInProgress: true }, {
    model: { script },
    worker: { metrics: registry, agent: { model: MODEL, nudge: false }, workerOptions: { interceptors: { activity: [loseFirstCompletion] } } },
  });

  test('count each write and the turn once: the update id and the activity identify them across attempts', { timeout: 120_000 }, async () => {
    const id = uniqueId('retried');
    const turnSeconds = await chat(bed.client, id);
    assert.deepEqual(retried.sort(), ['endTurn', 'writeTodos', 'writeTodos']);
    assertAgentCounts(parseMetrics(await registry.metrics()), (await bed.client.usage(id)).session, turnSeconds);
  });
});
