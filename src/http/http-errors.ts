import { isUnavailable, MissingSessionIdError, ReplayFailedError, SessionClosedError, SessionNotFoundError, TodoRejectedError } from '../client';

/**
 * Why the HTTP service itself refused a request before any session was asked: codes of the
 * HTTP layer, next to the library's own error codes.
 */
export type HttpRefusalCode = 'unauthorized' | 'forbidden-origin' | 'misdirected-request' | 'unsupported-media-type' | 'body-too-large' | 'no-such-endpoint';

/** An error answer: status, JSON body, and any header the status needs. */
export interface ErrorAnswer {
  status: 400 | 401 | 403 | 404 | 409 | 412 | 413 | 415 | 421 | 422 | 500 | 503;
  body: { error: string; code?: string; rule?: string; problems?: readonly unknown[] };
}

/** A request the service refuses before it reaches Temporal (malformed body, bad header). */
export class BadRequestError extends Error {
  override readonly name = 'BadRequestError';
}

/**
 * A request the HTTP layer refuses on its own (wrong `Host`, a cross-site write, a body that is
 * not JSON, one too large): the status and code say which, the message what to change.
 */
export class HttpRefusal extends Error {
  override readonly name = 'HttpRefusal';
  constructor(
    readonly status: 401 | 403 | 404 | 413 | 415 | 421,
    readonly code: HttpRefusalCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Maps what a handler threw to the status a client expects: 422 for a refused write, 412 for a
 * stale `If-Match`, 404 for an unknown session, 409 for a closed one, 503 when Temporal cannot
 * be reached. Anything else is a 500 whose body still holds one sentence, never a stack.
 */
export function errorAnswer(error: unknown): ErrorAnswer {
  if (error instanceof HttpRefusal) return { status: error.status, body: { error: error.message, code: error.code } };
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
