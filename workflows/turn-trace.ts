import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type { TurnOutcome } from '../src/session/workflow-api';

/**
 * The trace context of a session's turns, read from what history holds: the header Temporal's
 * OpenTelemetry interceptors put on an update or a workflow start. A turn begun by a
 * `user/message` update belongs to the trace of the request that sent it; a subagent's task, to
 * the trace of the spawn that started it. Nothing here depends on whether this worker traces:
 * the same history gives the same trace ids on every replay, on any worker.
 *
 * Module state is per workflow: each workflow in the sandbox has its own module instances.
 */

/** The header the interceptors carry a span context in (`TRACE_HEADER` of `@temporalio/interceptors-opentelemetry`). */
export const TRACE_HEADER = '_tracer-data';

/** A W3C `traceparent` of version 00; the ids must not be all zeros (an invalid context). */
const TRACEPARENT = /^00-(?!0{32})([0-9a-f]{32})-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** A turn whose request was traced: what its `invoke_agent` span needs. */
export interface TracedTurn {
  sessionId: string;
  /** The `traceparent` of the request that began the turn (its parent span). */
  traceparent: string;
  /** The id of the message the turn answers. */
  messageId: number;
}

/** Runs a turn inside its span; registered by the tracing interceptors when this worker traces. */
export interface TurnTracer {
  run(turn: TracedTurn, body: () => Promise<TurnOutcome>): Promise<TurnOutcome>;
}

let runTraceparent: string | undefined;
const updateTraceparents = new Map<string, string>();
let tracer: TurnTracer | undefined;

/**
 * The `traceparent` in a message's trace header, or `undefined` when there is none or it is not a
 * valid one (a foreign client may send anything: such a header is ignored, as W3C says).
 */
export function traceparentOf(headers: Headers | undefined): string | undefined {
  const payload = headers?.[TRACE_HEADER];
  if (payload === undefined) return undefined;
  let carrier: unknown;
  try {
    carrier = defaultPayloadConverter.fromPayload(payload);
  } catch {
    return undefined;
  }
  const traceparent = (carrier as { traceparent?: unknown } | null)?.traceparent;
  return typeof traceparent === 'string' && TRACEPARENT.test(traceparent) ? traceparent : undefined;
}

/** The trace id of a valid `traceparent` (32 hex digits), or `undefined`. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent !== undefined && TRACEPARENT.test(traceparent) ? traceparent.slice(3, 35) : undefined;
}

/** Notes the trace header this run was started with (a subagent's task belongs to the spawn's trace). */
export function noteRunHeaders(headers: Headers): void {
  runTraceparent = traceparentOf(headers);
}

/** The `traceparent` this run was started with, if its starter traced. */
export function startTraceparent(): string | undefined {
  return runTraceparent;
}

/** Notes the trace header of an accepted update, for its handler to take. */
export function noteUpdateHeaders(updateId: string, headers: Headers): void {
  const traceparent = traceparentOf(headers);
  if (traceparent !== undefined) updateTraceparents.set(updateId, traceparent);
}

/** The `traceparent` the update being handled carried (taken: asked once, by its handler). */
export function takeUpdateTraceparent(updateId: string | undefined): string | undefined {
  if (updateId === undefined) return undefined;
  const traceparent = updateTraceparents.get(updateId);
  updateTraceparents.delete(updateId);
  return traceparent;
}

/** Installs the tracer of turns (the tracing interceptors do, on a worker that traces). */
export function useTurnTracer(turnTracer: TurnTracer): void {
  tracer = turnTracer;
}

/**
 * Runs a turn: inside its `invoke_agent` span, parented by the request that began it, when this
 * worker traces and the request was traced; as it is otherwise. The turn's commands are the
 * same either way: only the trace headers on them differ.
 */
export function traceTurn(turn: TracedTurn | undefined, body: () => Promise<TurnOutcome>): Promise<TurnOutcome> {
  return turn !== undefined && tracer !== undefined ? tracer.run(turn, body) : body();
}
