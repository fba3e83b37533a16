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
export { exportSessionHistory } from './export-history';
export {
  foldHistory,
  historyToJson,
  parseExportedHistory,
  parseHistory,
  runInputOf,
  runsOf,
  sessionEventsFromHistory,
  workflowIdOf,
  type ExportedHistory,
  type History,
  type HistoryJson,
  type LoggedSessionEvent,
  type SessionHistoryJson,
  type SessionTimeline,
} from './session-history';
