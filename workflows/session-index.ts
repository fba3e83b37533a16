import { condition, upsertSearchAttributes } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributeUpdatePair } from '@temporalio/common';
import { changedIndexValues, type SessionIndexValues } from '../src/session/workflow-api';

/** Marks runs that keep their search attributes up to date; runs recorded before it replay without. */
export const SESSION_INDEX_PATCH = 'session-search-attributes';

const KEYS = {
  AgentSessionParent: defineSearchAttributeKey('AgentSessionParent', SearchAttributeType.KEYWORD),
  AgentSessionPending: defineSearchAttributeKey('AgentSessionPending', SearchAttributeType.INT),
  AgentSessionInProgress: defineSearchAttributeKey('AgentSessionInProgress', SearchAttributeType.INT),
  AgentSessionCompleted: defineSearchAttributeKey('AgentSessionCompleted', SearchAttributeType.INT),
  AgentSessionVersion: defineSearchAttributeKey('AgentSessionVersion', SearchAttributeType.DOUBLE),
  AgentSessionUpdatedAt: defineSearchAttributeKey('AgentSessionUpdatedAt', SearchAttributeType.DATETIME),
  AgentSessionClosed: defineSearchAttributeKey('AgentSessionClosed', SearchAttributeType.BOOL),
  AgentSessionInProgressContent: defineSearchAttributeKey('AgentSessionInProgressContent', SearchAttributeType.KEYWORD_LIST),
  AgentSessionSubagents: defineSearchAttributeKey('AgentSessionSubagents', SearchAttributeType.DOUBLE),
} as const;

/**
 * When a run makes its first upsert:
 * - `'none'`: never (a run recorded before sessions indexed themselves);
 * - `'at-start'`: when the run starts, with the state it starts from, then once more at the end
 *   of its first task if that task changed it (runs recorded before `first-task-indexed-once`);
 * - `'at-first-task-end'`: once, at the end of the first workflow task, with the state the task
 *   left (a first write that came with the start is in it: one upsert, not two).
 */
export type IndexStart = 'none' | 'at-start' | 'at-first-task-end';

/**
 * Keeps the session's search attributes equal to `values(state())`: once at the end of every
 * workflow task in which they changed (several events in one task make one upsert), and first as
 * `start` says. Returns `flush`, to call right before the run ends so its last state is indexed,
 * or `undefined` when `start` is `'none'` (it replays without).
 *
 * Every value is a function of the state, and each of them moves only with an applied event,
 * which also moves the version: adding a value to the set (as the in-progress contents and the
 * number of subagents were) puts it into upserts that were made anyway, never adds one, so runs
 * recorded before replay with the same commands (Temporal's replayer matches an upsert by its
 * command type, not by the attributes it carries). An empty list is sent as `[]`, which Temporal
 * takes as removing the attribute.
 *
 * The values are computed again only when the state object changed (the fold returns a new object
 * for every applied event): the SDK asks the condition after every job of every activation, and a
 * write's activation should not count a 30-item list several times over to learn that nothing moved.
 */
export function indexSession<S>(state: () => S, values: (state: S) => SessionIndexValues, start: IndexStart): (() => void) | undefined {
  if (start === 'none') return undefined;
  /** What the last upsert left the attributes at (nothing before the first). */
  let sent: SessionIndexValues | undefined;
  /** The last state found to match `sent`: while the state is this object, nothing is pending. */
  let matched: S | undefined;
  const pending = (): boolean => {
    const now = state();
    if (sent !== undefined && now === matched) return false;
    if (Object.keys(changedIndexValues(sent, values(now))).length > 0) return true;
    matched = now;
    return false;
  };
  const flush = (): void => {
    const now = state();
    const next = values(now);
    const pairs: SearchAttributeUpdatePair[] = [];
    for (const [name, value] of Object.entries(changedIndexValues(sent, next))) {
      if (value === null || value === undefined) continue;
      pairs.push({ key: KEYS[name as keyof typeof KEYS], value } as SearchAttributeUpdatePair);
    }
    if (pairs.length > 0) upsertSearchAttributes(pairs);
    sent = next;
    matched = now;
  };
  // The SDK asks conditions once synchronously after the workflow function first returns control,
  // before a first task's updates have run their handlers (they go through asynchronous
  // interceptors), then only after every microtask has run. Held until a microtask of its own
  // has run, the first upsert sees the state the whole first task left.
  let armed = start === 'at-start';
  if (start === 'at-start') flush();
  else void Promise.resolve().then(() => void (armed = true));
  void (async () => {
    for (;;) {
      await condition(() => armed && pending());
      flush();
    }
  })();
  return flush;
}
