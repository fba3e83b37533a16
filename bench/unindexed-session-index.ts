/**
 * Bench only, never in a worker a user runs: `workflows/session-index.ts` with its upserts taken
 * out, put in its place by {@link unindexedBundle} so that the throughput measurement can show, in
 * the same run, what the search-attribute upsert each write makes costs. A session run on this
 * bundle is the session in every other way (the same patch markers, handlers, fold and answers);
 * its listing lags, which is why no worker of the project runs it.
 *
 * Workflow code: bundled in place of the real module.
 */
import type { SessionIndexValues } from '../src/session/workflow-api';

export const SESSION_INDEX_PATCH = 'session-search-attributes';

export type IndexStart = 'none' | 'at-start' | 'at-first-task-end';

export function indexSession<S>(_state: () => S, _values: (state: S) => SessionIndexValues, _start: IndexStart): (() => void) | undefined {
  return undefined;
}
