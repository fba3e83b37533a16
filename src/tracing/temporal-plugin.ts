import type { ClientInterceptors, ClientOptions, WorkflowClientInterceptor } from '@temporalio/client';
import { OpenTelemetryPlugin, OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';

/**
 * Temporal's `OpenTelemetryPlugin`, with one change: queries sent by this process make no span.
 * A query changes nothing, and the CLI's `chat`, the dashboard and the HTTP service's event
 * streams poll several times a second: traced, every turn would hold hundreds of query spans, and
 * every open dashboard would make a trace per poll. Everything else (starts, updates, signals,
 * activities, the workflow interceptors' sink) is the plugin's own.
 */
export class SessionsOpenTelemetryPlugin extends OpenTelemetryPlugin {
  override configureClient(options: ClientOptions): ClientOptions {
    const configured = super.configureClient(options);
    return { ...configured, ...withUntracedQueries(configured.interceptors) };
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    const configured = super.configureWorker(options);
    return { ...configured, interceptors: { ...configured.interceptors, ...clientOf(withUntracedQueries(configured.interceptors?.client)) } };
  }
}

function clientOf(result: { interceptors?: ClientInterceptors }): { client?: ClientInterceptors } {
  return result.interceptors !== undefined ? { client: result.interceptors } : {};
}

function withUntracedQueries(interceptors: ClientInterceptors | undefined): { interceptors?: ClientInterceptors } {
  if (interceptors === undefined) return {};
  const workflow = Array.isArray(interceptors.workflow) ? interceptors.workflow.map(untracedQueries) : interceptors.workflow;
  return { interceptors: { ...interceptors, ...(workflow !== undefined ? { workflow } : {}) } };
}

function untracedQueries(interceptor: WorkflowClientInterceptor): WorkflowClientInterceptor {
  if (!(interceptor instanceof OpenTelemetryWorkflowClientInterceptor)) return interceptor;
  const untraced: WorkflowClientInterceptor = Object.create(interceptor) as WorkflowClientInterceptor;
  untraced.query = (input, next) => next(input);
  return untraced;
}
