/** A signal the session received and did not apply, as the `session` query shows it. */
export interface IgnoredSignal {
  /** The signal's name as sent (cut to 100 characters). */
  name: string;
  /** When it arrived (ISO 8601). */
  at: string | null;
  /** Why it was not applied and what to send instead. */
  reason: string;
}

/** How many ignored signals a session keeps (newest last) and carries into a new run. */
export const IGNORED_SIGNALS_KEPT = 20;

/** The signals a session handles; every other name is ignored and listed. */
export const HANDLED_SIGNALS = ['turn/start', 'turn/end', 'session/close', 'subagent/closed'] as const;

const UPDATES: Readonly<Record<string, string>> = {
  todo_write: '{"todos":[...]}',
  close: '{}',
  'subagent/spawn': '{"name":"...","task":"..."}',
};
const QUERIES = ['todos', 'session'];

/**
 * Why a signal named `name` is not applied, in words that tell the sender what to do instead.
 * A `todo_write` sent as a Signal is the important case: a signal is written to history the
 * moment it arrives, before anything can check it, so applying it would let an invalid list into
 * the log; the list must be sent as the `todo_write` Update, whose validator can refuse it.
 */
export function ignoredSignalReason(name: string, sessionId: string): string {
  const shown = JSON.stringify(cut(name, 100));
  const update = UPDATES[name];
  if (name === 'todo_write') {
    return (
      'todo_write is an Update, not a Signal: a signal cannot be validated before it is logged, so this one was not applied. ' +
      `Send the same arguments as the todo_write Update: temporal workflow update execute --workflow-id ${JSON.stringify(sessionId)} ` +
      `--name todo_write --input '${update}' (or agent-sessions write ${sessionId} --json '...')`
    );
  }
  if (update !== undefined) {
    return `${name} is an Update, not a Signal, so this one was not applied; send it as the ${name} Update: temporal workflow update execute --workflow-id ${JSON.stringify(sessionId)} --name ${name} --input '${update}'`;
  }
  if (QUERIES.includes(name)) {
    return `${name} is a Query, not a Signal; ask it with temporal workflow query --workflow-id ${JSON.stringify(sessionId)} --name ${name}`;
  }
  return `this session handles no signal named ${shown}; its signals are ${HANDLED_SIGNALS.join(', ')}, and todo_write, close and subagent/spawn are Updates`;
}

/** Cuts sender-controlled text so an entry stays small whatever was sent. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
