/**
 * Helpers of the tests that trace (kept apart from helpers.ts so that a test that does not
 * trace loads nothing of OpenTelemetry).
 */
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { TracingSettings } from '../src/config';
import type { Tracing } from '../src/tracing';
import { startOtelTracing } from '../src/tracing/otel-tracing';
import { until } from './helpers';

/** Settings of a tracer whose spans stay in memory (the endpoint is never called). */
export const IN_MEMORY_TRACING: TracingSettings = Object.freeze<TracingSettings>({
  endpoint: 'http://127.0.0.1:9/v1/traces',
  protocol: 'http/protobuf',
  headers: {},
  resourceAttributes: {},
  sampler: { name: 'parentbased_always_on', ratio: 1 },
  captureMessageContent: false,
});

/** A tracer whose spans stay in memory, and what it keeps. */
export function inMemoryTracing(settings: Partial<TracingSettings> = {}): { tracing: Tracing; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  return { tracing: startOtelTracing({ ...IN_MEMORY_TRACING, ...settings }, { serviceName: 'agent-sessions-test', exporter }), exporter };
}

/** The finished spans of one trace, once it is whole (one root, every span's parent in it) and `ready` holds. */
export async function wholeTrace(
  { tracing, exporter }: { tracing: Tracing; exporter: InMemorySpanExporter },
  traceId: string,
  ready: (spans: ReadableSpan[]) => boolean = () => true,
): Promise<ReadableSpan[]> {
  return until(`the spans of trace ${traceId}`, async () => {
    await tracing.flush();
    const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
    const ids = new Set(spans.map((span) => span.spanContext().spanId));
    const whole = spans.filter((span) => span.parentSpanId === undefined).length === 1 && spans.every((span) => span.parentSpanId === undefined || ids.has(span.parentSpanId));
    return whole && ready(spans) ? spans : undefined;
  });
}
