/**
 * Traces, behind the `OTEL_*` settings. This module loads nothing of OpenTelemetry: a program
 * calls {@link startTracing} only when `loadSettings(env).tracing` is set, and only then is the
 * OpenTelemetry SDK, the chosen OTLP exporter and Temporal's interceptors loaded (`otel-tracing.ts`).
 */
import type { ClientPlugin } from '@temporalio/client';
import type { WorkerPlugin } from '@temporalio/worker';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { AgentSpans } from '../../activities/agent-spans';
import type { TracingSettings } from '../config/tracing-settings';

/** What a worker adds when it traces: Temporal's plugin (spans of workflows and activities) and the GenAI spans of the agent's calls. */
export interface WorkerTracing {
  /** Temporal's `OpenTelemetryPlugin`: client, activity and workflow interceptors and the sink of the workflow's spans. */
  readonly plugin: WorkerPlugin;
  /** The `chat` and `execute_tool` spans of the agent's activities. */
  readonly agentSpans: AgentSpans;
}

/** An incoming HTTP request, as its span sees it. */
export interface TracedRequest {
  method: string;
  /** The path asked for (`url.path`). */
  path: string;
  /** The request's headers: a `traceparent` among them continues the caller's trace. */
  headers: Headers;
}

/** What a finished HTTP request tells its span. */
export interface RequestResult {
  status: number;
  /** The route that answered, as declared (`/sessions/:id/messages`); absent when none matched. */
  route?: string;
}

/** The HTTP service's side of tracing: one server span per request that changes something. */
export interface RequestTracing {
  /** Runs `handle` inside a server span for `request`; the span is named once the route is known. */
  serverSpan(request: TracedRequest, handle: () => Promise<RequestResult>): Promise<void>;
}

/** A process's tracer, exporting over OTLP. */
export interface Tracing extends RequestTracing {
  readonly settings: TracingSettings;
  /** The `service.name` its spans carry. */
  readonly serviceName: string;
  /** For a `SessionClient` (CLI, HTTP service): Temporal's `OpenTelemetryPlugin`, queries left untraced. */
  readonly clientPlugin: ClientPlugin;
  /** For `createWorker({ tracing })`. */
  readonly worker: WorkerTracing;
  /** Runs `fn` inside a new span, the root of a trace unless one is active (the CLI's `agent-sessions chat`). */
  inSpan<T>(name: string, attributes: Record<string, string | number | boolean>, fn: () => Promise<T>): Promise<T>;
  /** Sends every finished span now. */
  flush(): Promise<void>;
  /** Sends what is left and stops; spans made afterwards are dropped. */
  shutdown(): Promise<void>;
}

/** Options of {@link startTracing} beyond the settings. */
export interface StartTracingOptions {
  /** The `service.name` when `OTEL_SERVICE_NAME` is not set: `agent-sessions-worker`, `agent-sessions-http`, `agent-sessions-cli`, `agent-sessions`. */
  serviceName: string;
  /** Where spans go instead of the OTLP exporter the settings name (tests, the bench). */
  exporter?: SpanExporter;
}

/**
 * Starts tracing: the OTLP exporter the settings name (its module alone is loaded), a tracer
 * provider with the settings' resource and sampler, W3C trace-context propagation, and the
 * plugins and spans the service, the CLI and the worker add. The process's global context manager
 * and propagator are set once, by the first call.
 *
 * @example
 * const settings = loadSettings(process.env);
 * const tracing = settings.tracing && (await startTracing(settings.tracing, { serviceName: 'agent-sessions-worker' }));
 */
export async function startTracing(settings: TracingSettings, options: StartTracingOptions): Promise<Tracing> {
  const { startOtelTracing } = await import('./otel-tracing');
  return startOtelTracing(settings, options);
}
