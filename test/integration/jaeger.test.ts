import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findFreePort } from '../../src/devserver';
import { startModelServer, type ModelServer } from '../../src/model-server';
import type { Transcript } from '../../workflows/messages';
import { TRACED_CHAT, tracedChatScript } from '../fixtures/traced-chat';
import { runCli, spawnCli, uniqueId, until } from '../helpers';

// `agent-sessions up --traces` as a user runs it (pointed at the test server, and at a scripted
// model through OPENAI_BASE_URL), a two-turn chat through the CLI with the OTLP endpoint it
// prints, and the traces read back through Jaeger's own query API.

const MODEL = 'scripted-jaeger';
const taskQueue = uniqueId('jaeger');
let model: ModelServer;
let up: Awaited<ReturnType<typeof spawnCli>> | undefined;
let env: NodeJS.ProcessEnv;

/** A span as Jaeger's query API (`/api/traces/{id}`) answers it. */
interface JaegerSpan {
  spanID: string;
  operationName: string;
  references: Array<{ refType: string; spanID: string }>;
  tags: Array<{ key: string; value: unknown }>;
  processID: string;
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

const tag = (span: JaegerSpan, key: string): unknown => span.tags.find((t) => t.key === key)?.value;
const parentOf = (span: JaegerSpan): string | undefined => span.references.find((r) => r.refType === 'CHILD_OF')?.spanID;

before(async () => {
  model = await startModelServer({ script: tracedChatScript(MODEL) });
  env = {
    AGENT_SESSIONS_TASK_QUEUE: taskQueue,
    AGENT_SESSIONS_DATA_DIR: mkdtempSync(join(tmpdir(), 'agent-sessions-jaeger-')),
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: undefined,
    AGENT_SESSIONS_MODEL: MODEL,
    AGENT_SESSIONS_TRACE_URL: undefined,
  };
});

after(async () => {
  if (up !== undefined && up.child.exitCode === null) {
    up.child.kill('SIGKILL');
    await up.exited;
  }
  await model.close();
});

describe('agent-sessions up --traces', () => {
  test('runs Jaeger, and each turn of a chat is one trace there with its update, model calls, tool calls, subagent and tokens; Ctrl-C stops it', { timeout: 20 * 60_000 }, async () => {
    const httpPort = await findFreePort();
    up = await spawnCli(['up', '--allow-parallel-in-progress', 'true', '--http-port', String(httpPort), '--traces'], env);
    const started = up;
    // The first run on a machine builds Jaeger from the Go module proxy.
    await until('"agent-sessions is running."', () => (started.output().includes('agent-sessions is running.') ? true : undefined), 18 * 60_000).catch((error: Error) => {
      throw new Error(`${error.message}; up printed:\n${started.output()}`);
    });
    const output = started.output();
    const ui = /Jaeger \(traces\): (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    const otlp = /OTEL_EXPORTER_OTLP_ENDPOINT=(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    assert.ok(ui !== undefined && otlp !== undefined, output);

    // The chat `up` suggests, as it suggests it: with the OTLP endpoint, so the CLI's command is the root.
    const sessionId = uniqueId('jaeger-chat');
    const traced = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp };
    for (const text of [TRACED_CHAT.first, TRACED_CHAT.second]) {
      const chat = await runCli(['chat', sessionId, text], { env: traced });
      assert.equal(chat.code, 0, chat.stderr);
    }
    const transcript = JSON.parse((await runCli(['transcript', sessionId, '--json'], { env })).stdout) as Transcript;
    const turns = transcript.recentTurns ?? [];
    assert.equal(turns.length, 2);

    const traces: JaegerTrace[] = [];
    for (const turn of turns) {
      assert.match(turn.traceId ?? '', /^[0-9a-f]{32}$/);
      // Whole once the worker's last batch is in: the turn's span, which ends last, is there.
      traces.push(
        await until(
          `trace ${turn.traceId} in Jaeger`,
          async () => {
            const answer = (await (await fetch(`${ui}/api/traces/${turn.traceId}`)).json()) as { data?: JaegerTrace[] };
            const found = answer.data?.[0];
            return found !== undefined && found.spans.some((span) => span.operationName === `invoke_agent ${sessionId}` && tag(span, 'agent_sessions.turn.reason') === 'completed') ? found : undefined;
          },
          60_000,
          { everyMs: 500, ignoreErrors: true },
        ),
      );
    }

    for (const found of traces) {
      const roots = found.spans.filter((span) => parentOf(span) === undefined);
      assert.deepEqual(roots.map((span) => span.operationName), ['agent-sessions chat'], 'one root: the command that began the turn');
      assert.equal(found.processes[roots[0]!.processID]?.serviceName, 'agent-sessions-cli');
      const ids = new Set(found.spans.map((span) => span.spanID));
      assert.deepEqual(found.spans.filter((span) => !ids.has(parentOf(span) ?? span.spanID)).map((span) => span.operationName), [], 'every parent is in the trace');
      const names = found.spans.map((span) => span.operationName);
      for (const name of ['UpdateWithStartWorkflow:user/message', 'HandleUpdate:user/message', `invoke_agent ${sessionId}`]) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
      const services = new Set(Object.values(found.processes).map((process) => process.serviceName));
      assert.ok(services.has('agent-sessions'), 'the worker and service of up');
    }

    const [first, second] = traces as [JaegerTrace, JaegerTrace];
    const chats = (trace: JaegerTrace, session: string) => trace.spans.filter((span) => span.operationName === `chat ${MODEL}` && tag(span, 'gen_ai.conversation.id') === session);
    const sum = (spans: JaegerSpan[], key: string) => spans.reduce((total, span) => total + Number(tag(span, key) ?? 0), 0);
    assert.equal(chats(first, sessionId).length, 6, 'five answers and a first attempt that failed');
    assert.equal(chats(first, sessionId).filter((span) => tag(span, 'error') === true || tag(span, 'otel.status_code') === 'ERROR').length, 1);
    assert.equal(chats(second, sessionId).length, 1);
    const usage = transcript.usage;
    assert.equal(sum(chats(first, sessionId), 'gen_ai.usage.input_tokens') + sum(chats(second, sessionId), 'gen_ai.usage.input_tokens'), usage.prompt_tokens);
    assert.equal(sum(chats(first, sessionId), 'gen_ai.usage.output_tokens') + sum(chats(second, sessionId), 'gen_ai.usage.output_tokens'), usage.completion_tokens);
    const writes = first.spans.filter((span) => span.operationName === 'execute_tool todo_write');
    assert.equal(writes.length, 3);
    const refused = writes.filter((span) => tag(span, 'error.type') === 'duplicate-content');
    assert.equal(refused.length, 1, 'the refused write');
    assert.ok(first.spans.some((span) => span.operationName === 'execute_tool spawn_subagent'));
    assert.ok(first.spans.some((span) => span.operationName === `invoke_agent ${sessionId}/${TRACED_CHAT.subagent}`), "the subagent's turn, nested");

    started.child.kill('SIGINT');
    assert.equal(await started.exited, 0, started.output());
    const afterStop = started.output().split('Ctrl-C stops everything.\n')[1]!;
    // One line per part (the worker's warning about the retried model call may come before them).
    const stoppedLines = afterStop.split('\n').filter((line) => line.startsWith('stopped '));
    assert.deepEqual(stoppedLines.map((line) => line.replace(/ \(.*$/, '')), ['stopped the worker', 'stopped the HTTP API and dashboard', 'stopped Jaeger'], afterStop);
    assert.ok(!afterStop.includes('did not stop'), afterStop);
    const stopped = await fetch(`${ui}/api/services`).then(
      () => 'answering',
      () => 'closed',
    );
    assert.equal(stopped, 'closed', 'Jaeger stopped with it');
  });
});
