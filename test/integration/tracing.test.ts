import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SessionClient } from '../../src/client';
import type { TracingSettings } from '../../src/config';
import type { TurnOutcome } from '../../src/session';
import { startOtelTracing } from '../../src/tracing/otel-tracing';
import { TRACED_CHAT, tracedChatScript } from '../fixtures/traced-chat';
import { until, uniqueId, useTestBed } from '../helpers';

const exporter = new InMemorySpanExporter();
const settings: TracingSettings = {
  endpoint: 'http://127.0.0.1:9/v1/traces',
  protocol: 'http/protobuf',
  headers: {},
  resourceAttributes: {},
  sampler: { name: 'parentbased_always_on', ratio: 1 },
  captureMessageContent: false,
};
const tracing = startOtelTracing(settings, { serviceName: 'agent-sessions-test', exporter });
const bed = useTestBed('tracing', { allowParallelInProgress: true }, {
  model: { script: tracedChatScript() },
  worker: { tracing: tracing.worker },
  client: { plugins: [tracing.clientPlugin] },
});

/** Sends `text` inside a root span named like the CLI's, and waits for its turn to end. */
async function chat(client: SessionClient, sessionId: string, text: string): Promise<TurnOutcome> {
  return tracing.inSpan('agent-sessions chat', {}, async () => {
    const sent = await client.sendMessage(sessionId, text);
    return until(`the turn of message ${sent.messageId}`, async () => (await client.session(sessionId)).agent.recentTurns.find((turn) => turn.messageId === sent.messageId), 60_000);
  });
}

/** The finished spans of one trace, once `ready` holds for them. */
async function traceOf(traceId: string, ready: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
  return until(`the spans of trace ${traceId}`, async () => {
    await tracing.flush();
    const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
    return ready(spans) ? spans : undefined;
  });
}

describe('traces of turns', () => {
  test('each turn is one trace rooted at the request that began it', async () => {
    const sessionId = uniqueId('traced');
    const first = await chat(bed.client, sessionId, TRACED_CHAT.first);
    assert.equal(first.reason, 'completed');
    assert.match(first.traceId ?? '', /^[0-9a-f]{32}$/);
    const spans = await traceOf(first.traceId!, (s) => s.some((span) => span.name === 'agent-sessions chat') && s.filter((span) => span.name.startsWith('invoke_agent')).length >= 2);
    const byParent = new Map<string | undefined, ReadableSpan[]>();
    for (const span of spans) byParent.set(span.parentSpanId, [...(byParent.get(span.parentSpanId) ?? []), span]);
    const lines: string[] = [];
    const walk = (parent: string | undefined, depth: number) => {
      for (const span of (byParent.get(parent) ?? []).sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])) {
        lines.push(`${'  '.repeat(depth)}${span.name} ${span.status.code === 2 ? 'ERROR ' + (span.attributes['error.type'] ?? '') : ''}`);
        walk(span.spanContext().spanId, depth + 1);
      }
    };
    walk(undefined, 0);
    const ids = new Set(spans.map((s) => s.spanContext().spanId));
    for (const span of spans) if (span.parentSpanId !== undefined && !ids.has(span.parentSpanId)) lines.push(`ORPHAN ${span.name}`);
    console.log(lines.join('\n'));
  });
});
