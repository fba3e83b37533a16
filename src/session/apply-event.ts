import { foldTodos } from '../todo/fold-todos';
import { InvariantViolation } from '../todo/invariant';
import { type TodoCounts } from '../todo/todo-item';
import { cut, IGNORED_SIGNALS_KEPT } from './ignored-signal';
import type { SessionEvent } from './session-event';
import { findReceipt, INITIAL_SESSION_STATE, RECENT_WRITES_KEPT, receiptOf, type SessionState } from './session-state';

/**
 * Applies one event to a session's state, returning a new state (the input is not changed).
 * Pure: the same events in the same order give the same state, live, on replay and offline.
 * Some events change nothing at all (see {@link changesNothing}); the same state comes back.
 * A signal the session does not handle only adds an entry to `ignoredSignals`.
 *
 * @throws InvariantViolation when a write's list breaks the invariant or a spawn repeats a name.
 */
export function applySessionEvent(state: SessionState, event: SessionEvent): SessionState {
  const ignored = ignoredReason(state, event);
  if (ignored !== undefined) {
    const name = event.type === 'signal/ignored' ? event.name : event.type;
    const entry = { name: cut(String(name), 100), at: event.at ?? null, reason: cut(ignored, 500) };
    return { ...state, ignoredSignals: [...(state.ignoredSignals ?? []), entry].slice(-IGNORED_SIGNALS_KEPT) };
  }
  if (changesNothing(state, event)) return state;
  const next: SessionState = {
    ...state,
    todos: foldTodos(state.todos, event),
    version: state.version + 1,
    updatedAt: event.at ?? state.updatedAt,
  };
  switch (event.type) {
    case 'todo/write':
      if (event.updateId !== undefined) {
        // A run that started with a first-release run's receipts keeps as many as it was given.
        next.recentWrites = [...state.recentWrites, receiptOf(event.updateId, next)].slice(-Math.max(RECENT_WRITES_KEPT, state.recentWrites.length));
      }
      return next;
    case 'turn/start':
      return { ...next, turn: state.turn + 1, turnOpen: true };
    case 'turn/end':
      return { ...next, turnOpen: false };
    case 'session/close':
      return { ...next, turnOpen: false, closed: true };
    case 'subagent/spawn':
      if (state.children.some((child) => child.name === event.name || child.sessionId === event.sessionId)) {
        throw new InvariantViolation(`subagent/spawn of "${event.name}"`, 'a subagent with that name already exists');
      }
      return {
        ...next,
        children: [...state.children, { name: event.name, sessionId: event.sessionId, task: event.task ?? null, closed: false, counts: null }],
      };
    case 'subagent/closed':
      return {
        ...next,
        children: state.children.map((child) =>
          child.sessionId === event.sessionId ? { ...child, closed: true, counts: reportedCounts(event.counts), ...reportedAnswer(event.answer) } : child,
        ),
      };
    case 'signal/ignored':
      return state; // handled above
  }
}

/**
 * Why a signal is not applied, or `undefined` when it is (or is not a signal). Signals cannot be
 * refused before they are logged, so the ones that cannot be applied are listed instead of
 * vanishing: unknown names, a report naming no open subagent, a turn sent to a closed session.
 */
function ignoredReason(state: SessionState, event: SessionEvent): string | undefined {
  switch (event.type) {
    case 'signal/ignored':
      return event.reason;
    case 'subagent/closed':
      if (typeof event.sessionId !== 'string') return 'subagent/closed must carry {"sessionId", "counts"}; this report names no session';
      if (!state.children.some((child) => child.sessionId === event.sessionId)) {
        return `subagent/closed reports ${JSON.stringify(cut(event.sessionId, 100))}, which is not a subagent of this session`;
      }
      if (!state.children.some((child) => child.sessionId === event.sessionId && !child.closed)) {
        return `subagent/closed reports ${JSON.stringify(cut(event.sessionId, 100))}, which already reported that it closed`;
      }
      return undefined;
    case 'turn/start':
    case 'turn/end':
      return state.closed ? `${event.type} arrived after the session closed; a closed session starts and ends no turns` : undefined;
    default:
      return undefined;
  }
}

/**
 * Events that leave a session exactly as it is, version included: a retried write (its update
 * id already applied), a close or write once the session is closed (a signal can still arrive
 * while a closing parent waits for its subagents). A child that really started is recorded
 * even after its parent closed, so that the parent closes it too.
 */
function changesNothing(state: SessionState, event: SessionEvent): boolean {
  if (state.closed && event.type !== 'subagent/closed' && event.type !== 'subagent/spawn') return true;
  return event.type === 'todo/write' && findReceipt(state, event.updateId) !== undefined;
}

/** A child's answer as its parent keeps it: a string, cut to 16,000 characters; anything else is dropped. */
function reportedAnswer(answer: unknown): { answer?: string } {
  return typeof answer === 'string' ? { answer: cut(answer, 16_000) } : {};
}

function reportedCounts(value: unknown): TodoCounts | null {
  const counts = value as Partial<Record<keyof TodoCounts, unknown>> | null | undefined;
  const valid = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  if (counts === null || typeof counts !== 'object') return null;
  const { pending, in_progress, completed } = counts;
  return valid(pending) && valid(in_progress) && valid(completed) ? { pending, in_progress, completed } : null;
}

/** Folds a whole event sequence from the initial state (or from `from`). */
export function foldSession(events: Iterable<SessionEvent>, from: SessionState = INITIAL_SESSION_STATE): SessionState {
  let state = from;
  for (const event of events) state = applySessionEvent(state, event);
  return state;
}
