import { AgentSessionsError, OutcomeUnknownError, SessionTimeoutError, type SessionClient } from '../client';
import { withTimeLimit } from './time-limit';

/**
 * Temporal calls under the service's time limit, each kind saying what an answer that never came
 * means: a change may still be applied, a read of a session changed nothing, and the list of
 * sessions is Temporal's own to give.
 */
export interface TemporalCalls {
  /** A change to `sessionId`; on timeout an `outcome-unknown` error naming `updateId` when it has one. */
  change<T>(sessionId: string, call: () => Promise<T>, updateId?: string): Promise<T>;
  /** A read of `sessionId`; on timeout `session-timeout`. */
  read<T>(sessionId: string, call: () => Promise<T>): Promise<T>;
  /** A call about no one session (the list, the health check); on timeout `temporal-unavailable`. */
  listing<T>(call: () => Promise<T>): Promise<T>;
}

/** The {@link TemporalCalls} of `client`, each limited to `timeoutMs`. */
export function temporalCalls(client: SessionClient, timeoutMs: number): TemporalCalls {
  const connection = client.temporal.connection;
  return {
    change: (sessionId, call, updateId) => withTimeLimit(connection, timeoutMs, call, () => new OutcomeUnknownError(sessionId, updateId, timeoutMs)),
    read: (sessionId, call) => withTimeLimit(connection, timeoutMs, call, () => new SessionTimeoutError(sessionId)),
    listing: (call) =>
      withTimeLimit(connection, timeoutMs, call, () => new AgentSessionsError('temporal-unavailable', `Temporal did not answer within ${timeoutMs} ms; nothing was changed, try again shortly`)),
  };
}
