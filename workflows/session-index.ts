import { condition, patched, upsertSearchAttributes } from '@temporalio/workflow';
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
 * Keeps the session's search attributes equal to `values()`: set at the start of the run, then
 * once at the end of every workflow task in which they changed (several events in one task make
 * one upsert). Returns `flush`, to call right before the run ends so its last state is indexed,
 * or `undefined` in a run recorded before sessions indexed themselves (it replays without).
 *
 * Every value is a function of the state, and each of them moves only with an applied event,
 * which also moves the version: adding a value to the set (as the in-progress contents and the
 * number of subagents were) puts it into upserts that were made anyway, never adds one, so runs
 * recorded before replay with the same commands (Temporal's replayer matches an upsert by its
 * command type, not by the attributes it carries). An empty list is sent as `[]`, which Temporal
 * takes as removing the attribute.
 */
export function indexSession(values: () => SessionIndexValues): (() => void) | undefined {
  if (!patched(SESSION_INDEX_PATCH)) return undefined;
  let last: SessionIndexValues | undefined;
  const changes = (): Partial<SessionIndexValues> => changedIndexValues(last, values());
  const flush = (): void => {
    const changed = changes();
    const pairs: SearchAttributeUpdatePair[] = [];
    for (const [name, value] of Object.entries(changed)) {
      if (value === null || value === undefined) continue;
      pairs.push({ key: KEYS[name as keyof typeof KEYS], value } as SearchAttributeUpdatePair);
    }
    if (pairs.length > 0) upsertSearchAttributes(pairs);
    last = values();
  };
  flush();
  void (async () => {
    for (;;) {
      await condition(() => Object.keys(changes()).length > 0);
      flush();
    }
  })();
  return flush;
}
