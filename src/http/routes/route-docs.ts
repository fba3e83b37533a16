import { z } from '@hono/zod-openapi';
import { NOT_BLANK_PATTERN } from '../../todo';
import type { ErrorStatus } from '../http-errors';
import type { apiSchemas } from '../schemas';

/** The schemas of the API, once per app. */
export type ApiSchemas = ReturnType<typeof apiSchemas>;

/** A JSON response of the document. */
export function json<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

/**
 * What each error status means wherever it is answered, with the `code`s it carries; a route
 * says more where it has more to say (which rules a 422 names).
 */
const MEANING: Record<ErrorStatus, string> = {
  400: 'Malformed request (invalid-input, invalid-session-id): a parameter, header or body the document does not allow, or an Authorization header that is not "Bearer <token>"',
  401: 'Missing or wrong bearer token (unauthorized), when the service has one',
  403: 'A change sent by a web page of another origin (forbidden-origin)',
  404: 'No such session (session-not-found)',
  405: 'The path does not answer this method (method-not-allowed); Allow names those it does',
  409: 'The session is closed (session-closed): it takes no more writes, turns, spawns or messages',
  412: 'If-Match names a version the session is no longer at (rejected, rule stale-version)',
  413: 'The body is larger than the limit (body-too-large); the connection is then closed',
  415: 'The body is not sent as Content-Type: application/json (unsupported-media-type)',
  421: 'A Host this service does not answer to (misdirected-request)',
  422: 'Refused by a rule of the session (rejected); rule names it',
  500: 'An unexpected failure of the service (internal-error): one sentence, never a stack',
  502: 'The session cannot answer: its workflow task fails (session-broken)',
  503: 'No worker polls the session\'s task queue (no-worker), or Temporal is unreachable (temporal-unavailable)',
  504: 'No answer in time: session-timeout for a read (nothing changed), outcome-unknown for a change (it may still be applied; updateId says how to send it again)',
};

/**
 * What every route behind the bearer token can answer before it is reached, or when the service
 * fails: 400 (a malformed Authorization header, or a request the route's schema refuses), 401,
 * 421 (`Host`) and 500. See `request-guards.ts`.
 */
export const GUARDED: readonly ErrorStatus[] = [400, 401, 421, 500];

/** What a request that may carry a body (a POST) can answer beside {@link GUARDED}: 403 (`Origin`), 413 and 415. */
export const WRITE: readonly ErrorStatus[] = [403, 413, 415];

/** What a request that asks a session can answer: 404, and 502, 503 and 504 when it cannot answer. */
export const SESSION: readonly ErrorStatus[] = [404, 502, 503, 504];

/**
 * What Node's HTTP server answers on its own, with no body, before the service sees the request:
 * 408 for a request not received in time, 431 for a request line and headers over its 16 KiB.
 * Any request can get them, whatever its path.
 */
export const TRANSPORT_ERRORS = {
  408: { description: 'The request did not arrive in time: answered by the HTTP server itself, with no body' },
  431: { description: 'The request line and headers are larger than 16 KiB (a very long URL): answered by the HTTP server itself, with no body' },
} as const;

/**
 * The error answers of a route, one per status of `statuses`, each with its {@link MEANING} unless
 * `own` says what it means there, and the {@link TRANSPORT_ERRORS} any route can get. Errors are
 * the JSON `Error`, whatever the status.
 *
 * @example errorResponses(s, [...GUARDED, ...SESSION]) // a read of a session
 */
export function errorResponses(s: ApiSchemas, statuses: readonly ErrorStatus[], own: Partial<Record<ErrorStatus, string>> = {}) {
  const errors = Object.fromEntries([...new Set(statuses)].map((status) => [status, json(s.error, own[status] ?? MEANING[status])]));
  return { ...(errors as Record<ErrorStatus, ReturnType<typeof json<ApiSchemas['error']>>>), ...TRANSPORT_ERRORS };
}

/** The `{id}` path parameter: a session id, URL-encoded (a subagent's id holds "/"), not blank. */
export const sessionIdParam = z.object({
  id: z.string().openapi({ description: 'Session id (URL-encoded: child ids contain "/"); not blank', example: 'build-42', pattern: NOT_BLANK_PATTERN }),
});
