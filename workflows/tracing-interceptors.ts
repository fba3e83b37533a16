/**
 * The workflow interceptors every session bundle carries (not a workflow): Temporal's own
 * OpenTelemetry workflow interceptors — the `workflowModules` of `OpenTelemetryPlugin` from
 * `@temporalio/interceptors-opentelemetry` — wrapped so that:
 *
 * - no span ever draws from the workflow's own random stream (sdk-typescript#2023): span ids
 *   come from two named streams of Temporal's, one for the spans a replay creates again
 *   (handlers, activities, children, signals) and one for those it never does (queries and
 *   update validators), so a replay after a cache eviction gives every span the id it had;
 * - the workflow's run is the root of a trace of its own (sessions live for days: a turn's
 *   trace must not hold them), and a turn's activities are parented by the turn (`invoke_agent`);
 * - a signal, update, validator or query that arrives without a trace header (an untraced
 *   client, a dashboard polling) makes no span, instead of a trace of one span each.
 *
 * They run on every worker, tracing or not: Temporal's interceptors add microtask turns to an
 * update's completion (behind its SDK flag 6), which moves the update's completion among the
 * commands of its workflow task, so a history written with them replays only with them. On a
 * worker that does not trace (the bundle constant below, set like the parallel policy, which
 * changes no file the build id is computed from) their tracer is a no-op one: no span is made,
 * no random drawn, nothing sent to the sink, and the trace header is taken off every command.
 */
import {
  getRandomStream,
  workflowRandom,
  type Next,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
  type WorkflowRandomStream,
} from '@temporalio/workflow';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type * as SdkInstrumentation from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import type * as SdkInterceptors from '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors';
import type * as OtelApi from '@opentelemetry/api';
import { userMessageUpdate } from './messages';
import { noteRunHeaders, noteUpdateHeaders, TRACE_HEADER, traceparentOf, useTurnTracer, type TracedTurn } from './turn-trace';
import type { TurnOutcome } from '../src/session/workflow-api';

/** Replaced by the worker's bundler (webpack DefinePlugin): whether this worker exports traces (off: inert). */
declare const __AGENT_SESSIONS_TRACING__: boolean | undefined;

/** The named random streams span ids are drawn from; the workflow's own stream is never touched. */
export const SPAN_STREAMS = Object.freeze({ replayed: 'agent-sessions.tracing', live: 'agent-sessions.tracing.live' });

export const interceptors = (): WorkflowInterceptors => {
  const notes: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      noteRunHeaders(input.headers);
      return next(input);
    },
    handleUpdate(input, next) {
      if (input.name === userMessageUpdate.name) noteUpdateHeaders(input.updateId, input.headers);
      return next(input);
    },
  };
  const traced = tracedInterceptors(typeof __AGENT_SESSIONS_TRACING__ === 'boolean' && __AGENT_SESSIONS_TRACING__);
  // The notes first: they see the headers as they came, before the run's span drops its parent.
  return { ...traced, inbound: [notes, ...(traced.inbound ?? [])] };
};

/** Temporal's interceptors, wrapped (see the module's comment); with `exporting` false, inert. */
function tracedInterceptors(exporting: boolean): WorkflowInterceptors {
  // Required here rather than imported: no other workflow file may reach OpenTelemetry (lint-enforced).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk = (require('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors') as typeof SdkInterceptors).interceptors();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { instrument, extractContextFromHeaders } = require('@temporalio/interceptors-opentelemetry/lib/instrumentation') as typeof SdkInstrumentation;
  const sdkIn = (sdk.inbound ?? [])[0] as Required<WorkflowInboundCallsInterceptor>;
  const sdkOut = (sdk.outbound ?? [])[0] as Required<WorkflowOutboundCallsInterceptor>;
  type Tracer = Parameters<typeof instrument>[0]['tracer'];
  if (!exporting) {
    // The same code on the same path, with a tracer that makes no span (OpenTelemetry's own no-op).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ProxyTracerProvider } = require('@opentelemetry/api') as typeof OtelApi;
    const noop = new ProxyTracerProvider().getTracer('agent-sessions.untraced');
    for (const interceptor of [sdkIn, sdkOut]) Object.assign(interceptor, { tracer: noop });
  }
  // The SDK's tracer of this workflow (or the no-op one): the turn's span comes from it too.
  const tracer = (sdkIn as unknown as { tracer: Tracer }).tracer;
  const replayed = lazyStream(SPAN_STREAMS.replayed);
  const live = lazyStream(SPAN_STREAMS.live);
  const traced = (headers: Headers): boolean => traceparentOf(headers) !== undefined;
  // Off, a command carries no trace header: the no-op span would put its parent's context there.
  const sent = <I extends { headers: Headers }, O>(next: (input: I) => O): ((input: I) => O) =>
    exporting ? next : (input: I) => next({ ...input, headers: withoutTrace(input.headers) });

  const inbound: WorkflowInboundCallsInterceptor = {
    // The run's span is the root of the run's own trace: its starter's context is a turn's (or a
    // spawn's), and a run lasts for days.
    execute: (input, next) => replayed().with(() => sdkIn.execute({ ...input, headers: withoutTrace(input.headers) }, next)),
    handleSignal: (input, next) => (traced(input.headers) ? replayed().with(() => sdkIn.handleSignal(input, next)) : next(input)),
    handleUpdate: (input, next) => (traced(input.headers) ? replayed().with(() => sdkIn.handleUpdate(input, next)) : next(input)),
    validateUpdate: (input, next) => (traced(input.headers) ? live().with(() => sdkIn.validateUpdate(input, next)) : next(input)),
    handleQuery: (input, next) => (traced(input.headers) ? live().with(() => sdkIn.handleQuery(input, next)) : next(input)),
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => replayed().with(() => sdkOut.scheduleActivity(input, sent(next))),
    scheduleLocalActivity: (input, next) => replayed().with(() => sdkOut.scheduleLocalActivity(input, sent(next))),
    startChildWorkflowExecution: (input, next) => replayed().with(() => sdkOut.startChildWorkflowExecution(input, sent(next))),
    continueAsNew: (input, next) => replayed().with(() => sdkOut.continueAsNew(input, sent(next))),
    signalWorkflow: (input, next) => replayed().with(() => sdkOut.signalWorkflow(input, sent(next))),
    startNexusOperation: (input, next) => replayed().with(() => sdkOut.startNexusOperation(input, next)),
    getLogAttributes: (input, next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>) => sdkOut.getLogAttributes(input, next),
  };

  useTurnTracer({
    run: (turn: TracedTurn, body: () => Promise<TurnOutcome>) => {
      const context = extractContextFromHeaders({ [TRACE_HEADER]: defaultPayloadConverter.toPayload({ traceparent: turn.traceparent }) });
      return replayed().with(() =>
        instrument({
          tracer,
          spanName: `invoke_agent ${turn.sessionId}`,
          ...(context !== undefined ? { context } : {}),
          fn: async (span) => {
            span.setAttributes({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': turn.sessionId, 'agent_sessions.message.id': turn.messageId });
            // The turn itself runs on the workflow's own random stream, as it does untraced.
            const outcome = await workflowRandom.with(body);
            span.setAttributes({
              'agent_sessions.turn': outcome.turn,
              'agent_sessions.turn.reason': outcome.reason,
              ...(outcome.reason !== 'completed' ? { 'error.type': outcome.reason } : {}),
            });
            return outcome;
          },
        }),
      );
    },
  });
  return { inbound: [inbound], outbound: [outbound], internals: sdk.internals ?? [] };
}

/** A named random stream of this workflow, made on first use (only inside the workflow's context). */
function lazyStream(name: string): () => WorkflowRandomStream {
  let stream: WorkflowRandomStream | undefined;
  return () => (stream ??= getRandomStream(name));
}

function withoutTrace(headers: Headers): Headers {
  if (!(TRACE_HEADER in headers)) return headers;
  const rest = { ...headers };
  delete rest[TRACE_HEADER];
  return rest;
}
