import type { Client } from '@temporalio/client';
import { historyToJson, type ExportedHistory } from './session-history';

/**
 * Fetches a session's whole history through a Temporal client. A session with one run exports
 * exactly what `temporal workflow show --output json` prints (`{ "events": [...] }`); one that
 * continued as new exports `{ "sessionId", "runs": [{ "runId", "events" }, ...] }`, oldest run
 * first, found by following each run's `continuedExecutionRunId` back to the first.
 *
 * @throws whatever the client throws for an unknown workflow (WorkflowNotFoundError).
 */
export async function exportSessionHistory(client: Client, sessionId: string): Promise<ExportedHistory> {
  const runs: Array<{ runId: string; events: unknown[] }> = [];
  let runId: string | undefined;
  for (;;) {
    const handle = client.workflow.getHandle(sessionId, runId);
    const history = await handle.fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    runs.unshift({ runId: runId ?? (await handle.describe()).runId, events: historyToJson(history).events });
    const previous = started?.continuedExecutionRunId;
    if (!previous) break;
    runId = previous;
  }
  if (runs.length === 1) return { events: runs[0]!.events };
  return { sessionId, runs };
}
