import type { AgentState, SessionState } from '../src/session/workflow-api';

/** A session's state and its agent's, as the workflow holds them between two activations. */
export interface ObservedSession {
  state: SessionState;
  agent: AgentState;
}

// Module state is per workflow: the SDK gives every workflow its own instance of each module.
let read: (() => ObservedSession) | undefined;

/**
 * Lets the session's state be read from outside its code, by the fork capture's interceptor
 * (`fork-capture.ts`), which only a replay for a fork bundles. Sends nothing and schedules
 * nothing, so it leaves every history exactly as it was.
 */
export function observeSession(reader: () => ObservedSession): void {
  read = reader;
}

/** The session's state now, if a session runs in this workflow. */
export function observedSession(): ObservedSession | undefined {
  return read?.();
}
