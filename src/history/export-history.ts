import type { Client } from '@temporalio/client';
import { historyToJson, type ExportedHistory, type History } from './session-history';

/** One run of a session's continue-as-new chain: its run id and its history. */
export interface SessionRun {
  runId: string;
  history: History;
}

/**
 * Fetches every run of a session, oldest first: the current run (the newest), then each run
 * it continued from, found through its start event's `continuedExecutionRunId`.
 *
 * @throws whatever the client throws for an unknown workflow (WorkflowNotFoundError).
 */
export async function fetchSessionRuns(client: Client, sessionId: string): Promise<SessionRun[]> {
  const runs: SessionRun[] = [];
  // The current run's id first, so the history read is that run's even if it continues meanwhile.
  let runId: string | undefined = (await client.workflow.getHandle(sessionId).describe()).runId;
  while (runId) {
    const history = await client.workflow.getHandle(sessionId, runId).fetchHistory();
    runs.unshift({ runId, history });
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runs;
}

/**
 * Fetches a session's whole history through a Temporal client. A session with one run exports
 * exactly what `temporal workflow show --output json` prints (`{ "events": [...] }`); one that
 * continued as new exports `{ "sessionId", "runs": [{ "runId", "events" }, ...] }`, oldest run
 * first, found by following each run's `continuedExecutionRunId` back to the first.
 *
 * @throws whatever the client throws for an unknown workflow (WorkflowNotFoundError).
 */
export async function exportSessionHistory(client: Client, sessionId: string): Promise<ExportedHistory> {
  const runs = (await fetchSessionRuns(client, sessionId)).map(({ runId, history }) => ({ runId, events: historyToJson(history).events }));
  if (runs.length === 1) return { events: runs[0]!.events };
  return { sessionId, runs };
}
