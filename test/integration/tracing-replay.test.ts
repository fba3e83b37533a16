/**
 * sdk-typescript#2023, and replay across workers that trace and workers that do not.
 *
 * Temporal's OpenTelemetry workflow interceptors make span ids with `Math.random()`, which in the
 * sandbox is the workflow's own seeded random stream. Query spans and update-validator spans are
 * made only live, never on replay: after a cache eviction, the replay's stream is behind where
 * the live one was, and anything the workflow drew from it afterwards (a `uuid4()`) comes out
 * different. The first test shows it on a workflow made to draw; the session's interceptors draw
 * span ids from named streams of their own instead, and the session's code never draws at all.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryPlugin, OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { bundleWorkflowCode, NativeConnection, Worker, type BundleOptions, type WorkflowBundle } from '@temporalio/worker';
import { runsOf, type ExportedHistory } from '../../src/history/session-history';
import type { TurnOutcome } from '../../src/session';
import { AgentSessionsPlugin } from '../../src/worker/sessions-plugin';
import { bundleWithPlugins, replaySessionHistory } from '../../src/worker';
import { drawnQuery, drawUpdate, pingQuery, randomDraws } from '../fixtures/random-draws';
import { TRACED_CHAT, tracedChatScript } from '../fixtures/traced-chat';
import { startWorker, temporalAddress, todo, uniqueId, until, useTestBed } from '../helpers';
import { inMemoryTracing, wholeTrace } from '../tracing-helpers';

const traced = inMemoryTracing();
const { tracing } = traced;
const POLICY = { allowParallelInProgress: true };
const MODEL = 'scripted-traced';
const SLOW = 'Take a while over the release';
const script = tracedChatScript(MODEL);
script.conversations.push({ name: 'slow', match: { firstUserMessage: `^${SLOW}$` }, steps: [{ respond: { content: 'Done, slowly.', delayMs: 3000 } }] });
const workerOptions = { tracing: tracing.worker, agent: { model: MODEL } };
const bed = useTestBed('tracing-replay', POLICY, { model: { script }, worker: workerOptions, client: { plugins: [tracing.clientPlugin] } });

/**
 * A client like any traced one of another program: Temporal's own client interceptor, which
 * (unlike this project's clients) traces queries too, so every query it sends makes a span.
 */
async function foreignTracedClient(): Promise<Client> {
  const tracer = new BasicTracerProvider().getTracer('foreign');
  const connection = await Connection.connect({ address: await temporalAddress() });
  return new Client({ connection, interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer })] } });
}

/** Runs `fn` inside a span of its own, so what it sends carries a valid trace context. */
function inSpan<T>(fn: () => Promise<T>): Promise<T> {
  return tracing.inSpan('test', {}, fn);
}

/** Restarts the bed's worker: the session's cached state is gone, its next task replays its history. */
async function evict(): Promise<void> {
  await bed.worker.stop();
  bed.worker = await startWorker(POLICY, bed.taskQueue, { ...workerOptions, agent: { ...workerOptions.agent, baseUrl: bed.model.url } });
}

describe('sdk-typescript#2023: spans and the workflow random stream', () => {
  /** Draws once after many traced queries, evicts, and returns what the live draw and the replay drew. */
  async function drawAcrossEviction(bundle: WorkflowBundle): Promise<{ live: string; replayed: string }> {
    const taskQueue = uniqueId('random-draws');
    const connection = await NativeConnection.connect({ address: await temporalAddress() });
    const client = await foreignTracedClient();
    const run = async (fn: () => Promise<unknown>): Promise<void> => {
      const worker = await Worker.create({ connection, taskQueue, workflowBundle: bundle, plugins: [tracing.worker.plugin] });
      await worker.runUntil(fn);
    };
    try {
      const handle = await client.workflow.start(randomDraws, { taskQueue, workflowId: uniqueId('draws') });
      let live = '';
      await run(() =>
        inSpan(async () => {
          for (let i = 0; i < 40; i++) await handle.query(pingQuery);
          live = await handle.executeUpdate(drawUpdate);
        }),
      );
      // A new worker: nothing cached, the query replays the history and draws again.
      let replayed: string[] = [];
      await run(async () => (replayed = await handle.query(drawnQuery)));
      await handle.terminate();
      return { live, replayed: replayed[0] ?? '' };
    } finally {
      await client.connection.close();
      await connection.close();
    }
  }

  test("with Temporal's interceptors as they are, a replay after queries draws other random values than the live run did", async () => {
    // The very plugin the worker runs with: its workflowModules, as it would bundle them.
    const plugin = tracing.worker.plugin as OpenTelemetryPlugin;
    assert.ok(plugin instanceof OpenTelemetryPlugin);
    const modules = plugin.configureBundler({ workflowsPath: fixture() }).workflowInterceptorModules ?? [];
    assert.equal(modules.length, 1, "the plugin's workflowModules");
    const { code } = await bundleWorkflowCode({ workflowsPath: fixture(), workflowInterceptorModules: modules, logger: quiet });
    const { live, replayed } = await drawAcrossEviction({ code });
    assert.match(live, /^[0-9a-f-]{36}$/);
    assert.notEqual(replayed, live, 'the query and validator spans drew from the stream the workflow draws from');
  });

  test("with the session's tracing interceptors, the replay draws what the live run drew", async () => {
    const { code } = await bundleWorkflowCode({ workflowsPath: fixture(), plugins: [new AgentSessionsPlugin(POLICY, { tracing: true })], logger: quiet });
    const { live, replayed } = await drawAcrossEviction({ code });
    assert.match(live, /^[0-9a-f-]{36}$/);
    assert.equal(replayed, live);
  });
});

describe('a traced session across evictions', () => {
  /** The history of the session evicted below, written by a worker that traces. */
  let tracedHistory: ExportedHistory | undefined;

  test('a session evicted between many traced queries and its next write goes on, and its history replays with tracing on and off', async () => {
    await bed.ready;
    const sessionId = uniqueId('evicted');
    const first = await inSpan(() => turn(sessionId, TRACED_CHAT.first));
    assert.equal(first.reason, 'completed');
    const before = await bed.client.session(sessionId);
    // The query-heavy minute, shortened: hundreds of traced queries, each a span in the workflow.
    const foreign = await foreignTracedClient();
    try {
      const handle = foreign.workflow.getHandle(sessionId);
      await inSpan(async () => {
        for (let i = 0; i < 100; i++) {
          await handle.query('session');
          await handle.query('transcript');
          await handle.query('todos');
        }
      });
    } finally {
      await foreign.connection.close();
    }
    await evict();
    const written = await inSpan(() => bed.client.todoWrite(sessionId, { todos: [todo('Ship it', 'in_progress')] }));
    assert.equal(written.in_progress, 1);
    const second = await inSpan(() => turn(sessionId, TRACED_CHAT.second));
    assert.equal(second.reason, 'completed');
    const after = await bed.client.session(sessionId);
    assert.equal(after.version, before.version + 3, 'the write and the second turn (turn/start, turn/end) were applied, nothing else');

    const history = await bed.client.exportHistory(sessionId);
    tracedHistory = history;
    assert.equal(JSON.stringify(history).includes('WORKFLOW_TASK_FAILED'), false, 'no workflow task failed');
    await replaySessionHistory(history, POLICY, sessionId);
    await replaySessionHistory(history, POLICY, sessionId, { tracing: tracing.worker });
    const child = await bed.client.exportHistory(`${sessionId}/${TRACED_CHAT.subagent}`);
    await replaySessionHistory(child, POLICY, `${sessionId}/${TRACED_CHAT.subagent}`);
  });

  test("without Temporal's interceptors in the bundle, that history would not replay: why they run, inert, on workers that do not trace", async () => {
    assert.ok(tracedHistory !== undefined, 'the test above ran');
    const withoutInterceptors = { name: 'no-interceptors', configureBundler: (options: BundleOptions): BundleOptions => ({ ...options, workflowInterceptorModules: [] }) };
    const workflowBundle = await bundleWithPlugins(POLICY, [withoutInterceptors]);
    const results = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle }, runsOf(tracedHistory).map((history) => ({ workflowId: 'traced', history })))) results.push(result);
    assert.match(String(results[0]?.error), /Nondeterminism/);
  });

  test('a turn whose worker restarts in the middle of it is still one whole trace', async () => {
    await bed.ready;
    const sessionId = uniqueId('restarted');
    const outcome = await inSpan(async () => {
      const sent = await bed.client.sendMessage(sessionId, SLOW);
      await until('the model call', async () => ((await bed.client.session(sessionId)).agent.activity.state === 'calling-model' ? true : undefined));
      await evict();
      return ended(sessionId, sent.messageId);
    });
    assert.equal(outcome.reason, 'completed');
    // Every span the replaying worker made again has the id the first worker gave it: no span of
    // the turn is left without its parent.
    const spans: ReadableSpan[] = await wholeTrace(traced, outcome.traceId ?? '', (s) => s.some((span) => span.name === `invoke_agent ${sessionId}`));
    assert.equal(spans.filter((span) => span.name === `invoke_agent ${sessionId}`).length, 1);
  });
});

async function turn(sessionId: string, text: string): Promise<TurnOutcome> {
  return ended(sessionId, (await bed.client.sendMessage(sessionId, text)).messageId);
}

function ended(sessionId: string, messageId: number): Promise<TurnOutcome> {
  return until(`the turn of message ${messageId}`, async () => (await bed.client.session(sessionId)).agent.recentTurns.find((t) => t.messageId === messageId), 60_000);
}

function fixture(): string {
  return join(__dirname, '..', 'fixtures', 'random-draws.ts');
}

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (message: string) => process.stderr.write(`${message}\n`) };
