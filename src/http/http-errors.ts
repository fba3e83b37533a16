import { isUnavailable, MissingSessionIdError, SessionClosedError, SessionNotFoundError, TodoRejectedError } from '../client';
import { ReplayFailedError } from '../worker/replay';

/** An error answer: status and JSON body. */
export interface ErrorAnswer {
  status: 400 | 401 | 404 | 409 | 412 | 413 | 422 | 500 | 503;
  body: { error: string; rule?: string; problems?: readonly unknown[] };
}

/** A request the service refuses before it reaches Temporal (malformed body, bad header). */
export class BadRequestError extends Error {
  override readonly name = 'BadRequestError';
}

/**
 * Maps what a handler threw to the status a client expects: 422 for a refused write, 412 for a
 * stale `If-Match`, 404 for an unknown session, 409 for a closed one, 503 when Temporal cannot
 * be reached. Anything else is a 500 whose body still holds one sentence, never a stack.
 */
export function errorAnswer(error: unknown): ErrorAnswer {
  if (error instanceof TodoRejectedError) {
    const status = error.rule === 'stale-version' ? 412 : 422;
    return { status, body: { error: error.message, rule: error.rule, problems: error.problems } };
  }
  if (error instanceof BadRequestError || error instanceof MissingSessionIdError) return { status: 400, body: { error: error.message } };
  if (error instanceof SessionNotFoundError) return { status: 404, body: { error: error.message } };
  if (error instanceof SessionClosedError) return { status: 409, body: { error: error.message } };
  if (error instanceof ReplayFailedError) return { status: 422, body: { error: error.message } };
  if (isUnavailable(error)) {
    return { status: 503, body: { error: `Temporal is unreachable right now (${firstLine(error)}); try again shortly` } };
  }
  return { status: 500, body: { error: `internal error: ${firstLine(error)}` } };
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 300);
}
