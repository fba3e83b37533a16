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
 * On a worker that does not trace (the bundle constant below, set like the parallel policy, which
 * changes no file the build id is computed from), their inert twin runs instead
 * (`inert-tracing.ts`): the same asynchronous steps and SDK-flag checks without a span, so that a
 * history written with tracing on replays with it off and the other way round (Temporal's
 * interceptors move an update's completion, an activity's result and the workflow's end among the
 * commands of a workflow task). It makes no span, draws no random number, sends nothing to the
 * sink or in any header, and evaluates nothing of OpenTelemetry.
 */
import {
  getRandomStream,
  workflowRandom,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowInternalsInterceptor,
  type WorkflowOutboundCallsInterceptor,
  type WorkflowRandomStream,
} from '@temporalio/workflow';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type * as SdkInstrumentation from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import type * as SdkInterceptors from '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors';
import { userMessageUpdate } from './messages';
import { InertInboundInterceptor, InertOutboundInterceptor, inertInstrument } from './inert-tracing';
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

/** Temporal's interceptors, wrapped (see the module's comment); with `exporting` false, their inert twin. */
function tracedInterceptors(exporting: boolean): WorkflowInterceptors {
  const parts = exporting ? temporalsInterceptors() : inertInterceptors();
  const { sdkIn, sdkOut } = parts;
  // Span ids come from named streams; an inert worker makes no span and draws nothing.
  const replayed = exporting ? streamScope(SPAN_STREAMS.replayed) : unscoped;
  const live = exporting ? streamScope(SPAN_STREAMS.live) : unscoped;
  const traced = (headers: Headers): boolean => traceparentOf(headers) !== undefined;

  const inbound: WorkflowInboundCallsInterceptor = {
    // The run's span is the root of the run's own trace: its starter's context is a turn's (or a
    // spawn's), and a run lasts for days.
    execute: (input, next) => replayed(() => sdkIn.execute({ ...input, headers: withoutTrace(input.headers) }, next)),
    handleSignal: (input, next) => (traced(input.headers) ? replayed(() => sdkIn.handleSignal(input, next)) : next(input)),
    handleUpdate: (input, next) => (traced(input.headers) ? replayed(() => sdkIn.handleUpdate(input, next)) : next(input)),
    validateUpdate: (input, next) => (traced(input.headers) ? live(() => sdkIn.validateUpdate(input, next)) : next(input)),
    handleQuery: (input, next) => (traced(input.headers) ? live(() => sdkIn.handleQuery(input, next)) : next(input)),
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => replayed(() => sdkOut.scheduleActivity(input, next)),
    scheduleLocalActivity: (input, next) => replayed(() => sdkOut.scheduleLocalActivity(input, next)),
    startChildWorkflowExecution: (input, next) => replayed(() => sdkOut.startChildWorkflowExecution(input, next)),
    continueAsNew: (input, next) => replayed(() => sdkOut.continueAsNew(input, next)),
    signalWorkflow: (input, next) => replayed(() => sdkOut.signalWorkflow(input, next)),
    startNexusOperation: (input, next) => replayed(() => sdkOut.startNexusOperation(input, next)),
    ...(sdkOut.getLogAttributes !== undefined ? { getLogAttributes: sdkOut.getLogAttributes.bind(sdkOut) } : {}),
  };
  useTurnTracer({ run: (turn, body) => replayed(() => parts.runTurn(turn, () => workflowRandom.with(body))) });
  return { inbound: [inbound], outbound: [outbound], internals: parts.internals };
}

/** What the wrapper wraps: the interceptors (inbound, outbound, internals) and how a turn runs inside its span. */
interface TracingParts {
  sdkIn: Required<Omit<WorkflowInboundCallsInterceptor, 'getLogAttributes' | 'getMetricTags'>>;
  sdkOut: Required<Omit<WorkflowOutboundCallsInterceptor, 'getLogAttributes' | 'getMetricTags' | 'startTimer'>> & Pick<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>;
  internals: WorkflowInternalsInterceptor[];
  runTurn(turn: TracedTurn, body: () => Promise<TurnOutcome>): Promise<TurnOutcome>;
}

/** Temporal's own interceptors (the plugin's `workflowModules`), and the turn's span from their tracer. */
function temporalsInterceptors(): TracingParts {
  // Required here rather than imported: evaluated only on a worker that traces, and no other
  // workflow file may reach OpenTelemetry (lint-enforced).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk = (require('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors') as typeof SdkInterceptors).interceptors();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { instrument, extractContextFromHeaders } = require('@temporalio/interceptors-opentelemetry/lib/instrumentation') as typeof SdkInstrumentation;
  const sdkIn = (sdk.inbound ?? [])[0] as TracingParts['sdkIn'];
  // The SDK's tracer of this workflow, the one its own spans come from: the turn's span comes from it too.
  const tracer = (sdkIn as unknown as { tracer: Parameters<typeof instrument>[0]['tracer'] }).tracer;
  return {
    sdkIn,
    sdkOut: (sdk.outbound ?? [])[0] as TracingParts['sdkOut'],
    internals: sdk.internals ?? [],
    runTurn(turn, body) {
      const context = extractContextFromHeaders({ [TRACE_HEADER]: defaultPayloadConverter.toPayload({ traceparent: turn.traceparent }) });
      return instrument({
        tracer,
        spanName: `invoke_agent ${turn.sessionId}`,
        ...(context !== undefined ? { context } : {}),
        fn: async (span) => {
          span.setAttributes({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': turn.sessionId, 'agent_sessions.message.id': turn.messageId });
          const outcome = await body();
          span.setAttributes({
            'agent_sessions.turn': outcome.turn,
            'agent_sessions.turn.reason': outcome.reason,
            ...(outcome.reason !== 'completed' ? { 'error.type': outcome.reason } : {}),
          });
          return outcome;
        },
      });
    },
  };
}

/** Their inert twin (`inert-tracing.ts`): the same steps, no span, nothing of OpenTelemetry evaluated. */
function inertInterceptors(): TracingParts {
  return {
    sdkIn: new InertInboundInterceptor(),
    sdkOut: new InertOutboundInterceptor(),
    internals: [],
    // The steps of `instrument` with a context (the turn's header always gives one), as above.
    runTurn: (_turn, body) =>
      inertInstrument(true, async () => {
        const outcome = await body();
        return outcome;
      }),
  };
}

/** Runs `fn` with span ids drawn from the named stream `name` of this workflow (made on first use, inside the workflow). */
function streamScope(name: string): <T>(fn: () => T) => T {
  let stream: WorkflowRandomStream | undefined;
  return (fn) => (stream ??= getRandomStream(name)).with(fn);
}

function unscoped<T>(fn: () => T): T {
  return fn();
}

function withoutTrace(headers: Headers): Headers {
  if (!(TRACE_HEADER in headers)) return headers;
  const rest = { ...headers };
  delete rest[TRACE_HEADER];
  return rest;
}
