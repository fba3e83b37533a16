export {
  acceptedUpdates,
  editAcceptedUpdates,
  historyEventsJson,
  loggedSignals,
  runCount,
  type AcceptedUpdate,
  type HistoryEventJson,
  type LoggedSignal,
} from './history-events';
export { exportSessionHistory, fetchSessionRuns, type SessionRun } from './export-history';
export { eventsThroughTaskOf, isTaskOutput } from './task-cut';
export {
  foldHistory,
  historyToJson,
  parseExportedHistory,
  parseHistory,
  runInputOf,
  runsOf,
  sessionEventsFromHistory,
  stateAtEvent,
  timeOf,
  workflowIdOf,
  type ExportedHistory,
  type History,
  type HistoryJson,
  type LoggedSessionEvent,
  type SessionHistoryJson,
  type SessionTimeline,
} from './session-history';
