import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * Events that name the workflow task whose command made them, yet are written when the outside
 * world answers later: they are what the workflow takes in, not what it sent.
 */
const LATER_ANSWERS = new Set([
  'startChildWorkflowExecutionFailedEventAttributes',
  'signalExternalWorkflowExecutionFailedEventAttributes',
  'requestCancelExternalWorkflowExecutionFailedEventAttributes',
  'nexusOperationCancelRequestCompletedEventAttributes',
  'nexusOperationCancelRequestFailedEventAttributes',
]);

/**
 * Whether an event is part of what a workflow task sent: its commands (an activity scheduled, a
 * marker, a search-attribute upsert, the workflow's completion…) and the updates it accepted or
 * completed. They are written together, right after the task's WorkflowTaskCompleted event.
 */
export function isTaskOutput(event: HistoryEvent): boolean {
  for (const [key, value] of Object.entries(event)) {
    if (!key.endsWith('EventAttributes') || value === null || value === undefined) continue;
    if (key === 'workflowExecutionUpdateAcceptedEventAttributes' || key === 'workflowExecutionUpdateCompletedEventAttributes') return true;
    if (LATER_ANSWERS.has(key)) return false;
    return Number((value as { workflowTaskCompletedEventId?: unknown }).workflowTaskCompletedEventId ?? 0) > 0;
  }
  return false;
}

function isTaskCompleted(event: HistoryEvent | undefined): boolean {
  return event?.workflowTaskCompletedEventAttributes !== null && event?.workflowTaskCompletedEventAttributes !== undefined;
}

/**
 * How many events of a run (its events in order, event id = index + 1) to replay so that the
 * workflow ends in the state it had once it had taken in event `eventId`: through the workflow
 * task that made it (for the task's own completion and what it sent), or else through the first
 * task that completed after it (for an event the workflow takes in: a signal, an activity's
 * result, a child's start), with everything that task sent (the updates it accepted among them,
 * whose requests are read from those events on replay). When no task completed after it, the
 * whole run.
 *
 * @example a signal at event 13 and the next task completing at 17 with two commands: 19.
 */
export function eventsThroughTaskOf(events: readonly HistoryEvent[], eventId: number): number {
  let at = Math.min(Math.max(eventId, 1), events.length) - 1;
  // An event a task sent belongs to that task: back to its WorkflowTaskCompleted.
  while (at > 0 && isTaskOutput(events[at]!)) at--;
  let completed = -1;
  for (let i = at; i < events.length; i++) {
    if (isTaskCompleted(events[i])) {
      completed = i;
      break;
    }
  }
  if (completed === -1) return events.length;
  let end = completed + 1;
  while (end < events.length && isTaskOutput(events[end]!)) end++;
  return end;
}
