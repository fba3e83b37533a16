import {
  AgentSessionsError,
  isUnavailable,
  NoWorkerError,
  OutcomeUnknownError,
  RequestRejectedError,
  SessionBrokenError,
  type ErrorCode,
} from '../client';

/** Why the HTTP service itself refused a request before any session was asked. */
export const HTTP_REFUSAL_CODES = [
  'unauthorized',
  'forbidden-origin',
  'misdirected-request',
  'unsupported-media-type',
  'body-too-large',
  'no-such-endpoint',
  'method-not-allowed',
] as const;

/** One of {@link HTTP_REFUSAL_CODES}. */
export type HttpRefusalCode = (typeof HTTP_REFUSAL_CODES)[number];

/** Every `code` an error answer can carry: the library's, the HTTP layer's, and `internal-error`. */
export type HttpErrorCode = ErrorCode | HttpRefusalCode | 'internal-error';

/** The statuses an error answer can have. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 412 | 413 | 415 | 421 | 422 | 500 | 502 | 503 | 504;

/** An error answer: status and JSON body. */
export interface ErrorAnswer {
  status: ErrorStatus;
  body: {
    error: string;
    code: HttpErrorCode;
    /** For a refused request (`code: rejected`): the first broken rule. */
    rule?: string;
    /** For a refused request: every problem found, with its path. */
    problems?: readonly unknown[];
    /** For a change whose outcome is unknown: the `Idempotency-Key` to send it again with. */
    updateId?: string;
  };
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
 * The status of each library error code. Exhaustive on purpose: a new code does not compile
 * until it has a status here.
 */
const STATUS_OF: Record<ErrorCode, ErrorStatus> = {
  rejected: 422,
  'invalid-input': 400,
  'invalid-session-id': 400,
  'session-not-found': 404,
  'session-closed': 409,
  // A fork asked for an id that is taken: ids are never reused.
  'session-exists': 409,
  // Temporal answered; the session behind it cannot (its workflow task fails): a bad upstream.
  'session-broken': 502,
  'no-worker': 503,
  // A read (or a session) that got no answer in time: nothing changed, asking again is safe.
  'session-timeout': 504,
  'temporal-unavailable': 503,
  // A change was sent and its answer never came: it may still be applied.
  'outcome-unknown': 504,
  'replay-failed': 422,
  // The service's own settings are wrong: nothing the client can change.
  'invalid-setting': 500,
  // No HTTP route releases today; were one added, a refused release is a conflict with the deployment's state.
  'release-refused': 409,
};

/**
 * The one place an error becomes an HTTP answer, by its `code` (and the rule, for a stale
 * `If-Match`), never by its message: see {@link STATUS_OF}. Every body is
 * `{ "error": "<sentence>", "code": "<code>" }`, plus `rule` and `problems` for a refusal and
 * `updateId` for a change that was sent but not answered (send it again with
 * `Idempotency-Key: <updateId>`). Anything unexpected is a 500 whose body still holds one
 * sentence, never a stack.
 */
export function errorAnswer(error: unknown): ErrorAnswer {
  if (error instanceof HttpRefusal) return { status: error.status, body: { error: error.message, code: error.code } };
  if (error instanceof RequestRejectedError) {
    return {
      status: error.rule === 'stale-version' ? 412 : 422,
      body: { error: error.message, code: error.code, rule: error.rule, problems: error.problems },
    };
  }
  if (error instanceof AgentSessionsError) {
    const updateId = pendingUpdateId(error);
    return {
      status: STATUS_OF[error.code],
      body:
        updateId === undefined
          ? { error: error.message, code: error.code }
          : { error: `${error.message} Over HTTP the update id is the Idempotency-Key header: send the request again with Idempotency-Key: ${updateId}.`, code: error.code, updateId },
    };
  }
  // A request made on the connection directly (the health check) fails with gRPC's own error.
  if (isUnavailable(error)) return { status: 503, body: { error: `Temporal is unreachable right now (${firstLine(error)}); try again shortly`, code: 'temporal-unavailable' } };
  return { status: 500, body: { error: `internal error: ${firstLine(error)}`, code: 'internal-error' } };
}

/** The update id of a change that was sent and may still be applied, when the error has one. */
function pendingUpdateId(error: AgentSessionsError): string | undefined {
  if (error instanceof OutcomeUnknownError) return error.updateId;
  if (error instanceof NoWorkerError || error instanceof SessionBrokenError) return error.pendingUpdateId;
  return undefined;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 300);
}
