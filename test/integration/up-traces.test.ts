import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findFreePort, phoenixSpans, PHOENIX_DEFAULT_PROJECT, type PhoenixSpan } from '../../src/devserver';
import { startModelServer, type ModelServer } from '../../src/model-server';
import type { Transcript } from '../../workflows/messages';
import { TRACED_CHAT, tracedChatScript } from '../fixtures/traced-chat';
import { runCli, spawnCli, uniqueId, until } from '../helpers';

// `agent-sessions up --traces` as a user runs it (pointed at the test server, and at a scripted
// model through OPENAI_BASE_URL), a two-turn chat through the CLI with the OTLP endpoint it
// prints, and the traces read back through Phoenix's own REST API, as Phoenix shows them: our
// `gen_ai.*` attributes read as OpenInference's model, tool and agent spans.

const MODEL = 'scripted-traces';
const taskQueue = uniqueId('up-traces');
let model: ModelServer;
let up: Awaited<ReturnType<typeof spawnCli>> | undefined;
let env: NodeJS.ProcessEnv;

/** An attribute of a span as Phoenix answers it: flat (`a.b.c`) or nested (`{a: {b: {c}}}`). */
const tag = (span: PhoenixSpan, key: string): unknown => {
  if (key in span.attributes) return span.attributes[key];
  let value: unknown = span.attributes;
  for (const part of key.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  return value;
};

before(async () => {
  model = await startModelServer({ script: tracedChatScript(MODEL) });
  env = {
    AGENT_SESSIONS_TASK_QUEUE: taskQueue,
    AGENT_SESSIONS_DATA_DIR: mkdtempSync(join(tmpdir(), 'agent-sessions-up-traces-')),
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
  test('runs Phoenix, and each turn of a chat is one trace there with its update, model calls with tokens, tool calls, refused write and subagent; the dashboard links to it; Ctrl-C stops it', { timeout: 10 * 60_000 }, async () => {
    const httpPort = await findFreePort();
    up = await spawnCli(['up', '--allow-parallel-in-progress', 'true', '--http-port', String(httpPort), '--traces'], env);
    const started = up;
    // The first run on a machine installs Phoenix from PyPI.
    await until('"agent-sessions is running."', () => (started.output().includes('agent-sessions is running.') ? true : undefined), 8 * 60_000).catch((error: Error) => {
      throw new Error(`${error.message}; up printed:\n${started.output()}`);
    });
    const output = started.output();
    const ui = /Traces \(Arize Phoenix\): (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    const otlp = /OTEL_EXPORTER_OTLP_ENDPOINT=(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    assert.ok(ui !== undefined && otlp !== undefined, output);
    assert.ok(output.includes(`a turn's trace: ${ui}/redirects/traces/{traceId}`), output);

    // The dashboard links each turn there.
    const config = (await (await fetch(`http://127.0.0.1:${httpPort}/dashboard-config`)).json()) as { traceUrl: string | null };
    assert.equal(config.traceUrl, `${ui}/redirects/traces/{traceId}`);

    // The chat `up` suggests, as it suggests it: with the OTLP endpoint, so the CLI's command is the root.
    const sessionId = uniqueId('traces-chat');
    const traced = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp };
    for (const text of [TRACED_CHAT.first, TRACED_CHAT.second]) {
      const chat = await runCli(['chat', sessionId, text], { env: traced });
      assert.equal(chat.code, 0, chat.stderr);
    }
    const transcript = JSON.parse((await runCli(['transcript', sessionId, '--json'], { env })).stdout) as Transcript;
    const turns = transcript.recentTurns ?? [];
    assert.equal(turns.length, 2);

    const traces: PhoenixSpan[][] = [];
    for (const turn of turns) {
      assert.match(turn.traceId ?? '', /^[0-9a-f]{32}$/);
      // Whole once the worker's last batch is in: the turn's span, which ends last, is there.
      traces.push(
        await until(
          `trace ${turn.traceId} in Phoenix`,
          async () => {
            const spans = await phoenixSpans(ui, PHOENIX_DEFAULT_PROJECT, { traceIds: [turn.traceId!] });
            return spans.some((span) => span.name === `invoke_agent ${sessionId}` && tag(span, 'agent_sessions.turn.reason') === 'completed') ? spans : undefined;
          },
          60_000,
          { everyMs: 500, ignoreErrors: true },
        ),
      );
    }

    for (const spans of traces) {
      const roots = spans.filter((span) => span.parent_id === null);
      assert.deepEqual(roots.map((span) => span.name), ['agent-sessions chat'], 'one root: the command that began the turn');
      const ids = new Set(spans.map((span) => span.context.span_id));
      assert.deepEqual(spans.filter((span) => span.parent_id !== null && !ids.has(span.parent_id)).map((span) => span.name), [], 'every parent is in the trace');
      const names = spans.map((span) => span.name);
      // The CLI's spans and those of up's worker (Phoenix keeps no service.name: RunActivity is the worker's).
      for (const name of ['UpdateWithStartWorkflow:user/message', 'HandleUpdate:user/message', `invoke_agent ${sessionId}`, 'RunActivity:callModel']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
      const agent = spans.find((span) => span.name === `invoke_agent ${sessionId}`)!;
      assert.equal(agent.span_kind, 'AGENT');
      assert.equal(tag(agent, 'session.id'), sessionId, "Phoenix's session of the turn is the agent session");
    }

    const [first, second] = traces as [PhoenixSpan[], PhoenixSpan[]];
    const chats = (spans: PhoenixSpan[], session: string) => spans.filter((span) => span.name === `chat ${MODEL}` && tag(span, 'gen_ai.conversation.id') === session);
    const sum = (spans: PhoenixSpan[], key: string) => spans.reduce((total, span) => total + Number(tag(span, key) ?? 0), 0);
    assert.equal(chats(first, sessionId).length, 6, 'five answers and a first attempt that failed');
    assert.equal(chats(first, sessionId).filter((span) => span.status_code === 'ERROR').length, 1);
    assert.equal(chats(second, sessionId).length, 1);
    for (const span of [...chats(first, sessionId), ...chats(second, sessionId)]) {
      assert.equal(span.span_kind, 'LLM', 'a model call is an LLM span in Phoenix');
      assert.equal(tag(span, 'llm.model_name'), MODEL);
    }
    const usage = transcript.usage;
    const all = [...chats(first, sessionId), ...chats(second, sessionId)];
    assert.equal(sum(all, 'gen_ai.usage.input_tokens'), usage.prompt_tokens);
    assert.equal(sum(all, 'gen_ai.usage.output_tokens'), usage.completion_tokens);
    // The tokens as Phoenix counts and shows them.
    assert.equal(sum(all, 'llm.token_count.prompt'), usage.prompt_tokens);
    assert.equal(sum(all, 'llm.token_count.completion'), usage.completion_tokens);
    assert.equal(sum(all, 'llm.token_count.total'), usage.prompt_tokens + usage.completion_tokens);
    const writes = first.filter((span) => span.name === 'execute_tool todo_write');
    assert.equal(writes.length, 3);
    for (const span of writes) {
      assert.equal(span.span_kind, 'TOOL');
      assert.equal(tag(span, 'tool.name'), 'todo_write');
    }
    const refused = writes.filter((span) => tag(span, 'error.type') === 'duplicate-content');
    assert.equal(refused.length, 1, 'the refused write');
    assert.equal(refused[0]!.status_code, 'ERROR');
    assert.ok(first.some((span) => span.name === 'execute_tool spawn_subagent'));
    assert.ok(first.some((span) => span.name === `invoke_agent ${sessionId}/${TRACED_CHAT.subagent}`), "the subagent's turn, nested");

    started.child.kill('SIGINT');
    assert.equal(await started.exited, 0, started.output());
    const afterStop = started.output().split('Ctrl-C stops everything.\n')[1]!;
    // One line per part (the worker's warning about the retried model call may come before them).
    const stoppedLines = afterStop.split('\n').filter((line) => line.startsWith('stopped '));
    assert.deepEqual(stoppedLines.map((line) => line.replace(/ \(.*$/, '')), ['stopped the worker', 'stopped the HTTP API and dashboard', 'stopped Phoenix'], afterStop);
    assert.ok(!afterStop.includes('did not stop'), afterStop);
    const stopped = await fetch(`${ui}/healthz`).then(
      () => 'answering',
      () => 'closed',
    );
    assert.equal(stopped, 'closed', 'Phoenix stopped with it');
  });
});
