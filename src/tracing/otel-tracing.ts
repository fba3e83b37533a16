/**
 * The OpenTelemetry side of {@link startTracing}: loaded only by it, so a process whose
 * settings name no OTLP endpoint never loads any of this.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Span, type TextMapGetter } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type * as GrpcJs from '@grpc/grpc-js';
import type * as OtlpGrpc from '@opentelemetry/exporter-trace-otlp-grpc';
import type * as OtlpJson from '@opentelemetry/exporter-trace-otlp-http';
import type * as OtlpProto from '@opentelemetry/exporter-trace-otlp-proto';
import type { TraceSampler, TracingSettings } from '../config/tracing-settings';
import { genAiSpans } from './agent-spans';
import type { RequestResult, StartTracingOptions, TracedRequest, Tracing } from './index';
import { SessionsOpenTelemetryPlugin } from './temporal-plugin';

/** The name and version spans of this project carry as their instrumentation scope. */
const SCOPE = 'agent-sessions';

let globalsSet = false;

/** See {@link startTracing}. */
export function startOtelTracing(settings: TracingSettings, options: StartTracingOptions): Tracing {
  setGlobals();
  const serviceName = settings.serviceName ?? settings.resourceAttributes['service.name'] ?? options.serviceName;
  const resource = Resource.default().merge(new Resource({ ...settings.resourceAttributes, 'service.name': serviceName }));
  const processor = new BatchSpanProcessor(options.exporter ?? otlpExporter(settings));
  const provider = new BasicTracerProvider({ resource, sampler: samplerOf(settings.sampler), spanProcessors: [processor] });
  const tracer = provider.getTracer(SCOPE);
  // The plugin's own interceptors take this tracer, not the process's global one: two tracings
  // in one process (tests, the bench) stay apart.
  const plugin = new SessionsOpenTelemetryPlugin({ resource, spanProcessor: workflowSpans(processor), tracer });
  let stopped: Promise<void> | undefined;
  let toldUnsent = false;

  const ended = (span: Span, error: unknown): never => {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    if (error instanceof Error) span.recordException(error);
    throw error;
  };

  return {
    settings,
    serviceName,
    clientPlugin: plugin,
    worker: { plugin, agentSpans: genAiSpans(tracer, settings.captureMessageContent) },
    inSpan: (name, attributes, fn) =>
      tracer.startActiveSpan(name, { attributes }, async (span) => {
        try {
          return await fn();
        } catch (error) {
          return ended(span, error);
        } finally {
          span.end();
        }
      }),
    serverSpan: (request: TracedRequest, handle: () => Promise<RequestResult>) =>
      // A caller's `traceparent` is continued: the request is then part of the caller's trace.
      context.with(propagation.extract(ROOT_CONTEXT, request.headers, HEADERS), () =>
        tracer.startActiveSpan(
          request.method,
          { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'url.path': request.path } },
          async (span) => {
            try {
              const result = await handle();
              if (result.route !== undefined) {
                const route = result.route.replace(/:(\w+)/g, '{$1}');
                span.updateName(`${request.method} ${route}`);
                span.setAttribute('http.route', route);
              }
              span.setAttribute('http.response.status_code', result.status);
              if (result.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
            } catch (error) {
              ended(span, error);
            } finally {
              span.end();
            }
          },
        ),
      ),
    flush: () => provider.forceFlush().catch(unsent),
    shutdown: () => (stopped ??= Promise.race([provider.shutdown().catch(unsent), sleep(SHUTDOWN_MS)]).then(() => undefined)),
  };

  /** A collector that cannot be reached never fails the program: it is said once, when spans could not be sent. */
  function unsent(error: unknown): void {
    if (toldUnsent) return;
    toldUnsent = true;
    process.stderr.write(`agent-sessions: traces could not be sent to ${settings.endpoint}: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

/** Longest wait for the last spans to go out when a program stops. */
const SHUTDOWN_MS = 5000;

/**
 * The facts of the workflow a workflow's span keeps: the sink of Temporal's plugin copies the
 * whole `WorkflowInfo` onto each span (search attributes, memo, times, history size, the
 * deployment version, …, about 1.5 kB a span, more than the span itself), where these name the
 * workflow well enough.
 */
const WORKFLOW_FACTS = new Set(['workflowId', 'runId', 'workflowType', 'taskQueue', 'namespace', 'attempt']);

/** `WorkflowInfo`'s other fields, as the sink copies them: dropped from the span. */
const WORKFLOW_INFO_DROPPED = new Set([
  'searchAttributes', 'typedSearchAttributes', 'memo', 'parent', 'root', 'lastResult', 'lastFailure', 'firstExecutionRunId',
  'continuedFromExecutionRunId', 'originalExecutionRunId', 'startTime', 'runStartTime', 'executionTimeoutMs', 'executionExpirationTime',
  'runTimeoutMs', 'taskTimeoutMs', 'retryPolicy', 'cronSchedule', 'cronScheduleToScheduleInterval', 'historyLength', 'historySize',
  'continueAsNewSuggested', 'suggestedContinueAsNewReasons', 'targetWorkerDeploymentVersionChanged', 'currentBuildId', 'currentDeploymentVersion',
  'unsafe', 'priority', 'now',
]);

/** The processor of the spans workflows send through the plugin's sink: {@link WORKFLOW_FACTS} of the info it copies, and the span's own attributes. */
function workflowSpans(processor: SpanProcessor): SpanProcessor {
  return {
    onStart: () => undefined,
    onEnd(span: ReadableSpan) {
      const attributes = span.attributes as Record<string, unknown>;
      for (const [key, value] of Object.entries(attributes)) {
        const nested = value !== null && typeof value === 'object' && !Array.isArray(value);
        if (!WORKFLOW_FACTS.has(key) && (nested || WORKFLOW_INFO_DROPPED.has(key))) delete attributes[key];
      }
      processor.onEnd(span);
    },
    forceFlush: () => processor.forceFlush(),
    // The provider shuts the processor down.
    shutdown: () => Promise.resolve(),
  };
}

/** The process's context manager and propagator, set by the first tracing started (a second one shares them). */
function setGlobals(): void {
  if (globalsSet) return;
  globalsSet = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

const HEADERS: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

function samplerOf({ name, ratio }: TraceSampler): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The OTLP exporter of the settings' protocol; only its module is loaded. */
function otlpExporter(settings: TracingSettings): SpanExporter {
  const { endpoint: url, headers } = settings;
  /* eslint-disable @typescript-eslint/no-require-imports -- one exporter module of three, the one the protocol names */
  switch (settings.protocol) {
    case 'grpc': {
      const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-grpc') as typeof OtlpGrpc;
      // The gRPC exporter's own dependency (and Temporal client's): headers travel as metadata.
      const { Metadata } = require('@grpc/grpc-js') as typeof GrpcJs;
      const metadata = new Metadata();
      for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
      return new OTLPTraceExporter({ url, metadata });
    }
    case 'http/json': {
      const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpJson;
      return new OTLPTraceExporter({ url, headers });
    }
    case 'http/protobuf': {
      const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto') as typeof OtlpProto;
      return new OTLPTraceExporter({ url, headers });
    }
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
}
