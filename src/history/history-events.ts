import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { runsOf, type ExportedHistory, type History } from './session-history';

/** One event of an exported history in its JSON form, as `temporal workflow show --output json` prints it. */
export type HistoryEventJson = Record<string, unknown> & { eventId?: string; eventType?: string };

/** An accepted update found in a history, with its decoded arguments. */
export interface AcceptedUpdate {
  /** The history event id. */
  eventId: number;
  /** The wire name of the update (`todo_write`, `subagent/spawn`, …). */
  name: string;
  updateId: string;
  /** The decoded arguments, in order (`undefined` where a payload cannot be decoded). */
  args: unknown[];
}

/** A signal found in a history, with its decoded input. */
export interface LoggedSignal {
  eventId: number;
  name: string;
  /** The decoded first argument, if any. */
  input: unknown;
}

/** Every event of an export, all runs in order, in the JSON form. */
export function historyEventsJson(exported: ExportedHistory): HistoryEventJson[] {
  return ('runs' in exported ? exported.runs.flatMap((run) => run.events) : exported.events) as HistoryEventJson[];
}

/** How many runs an export holds (more than one after continue-as-new). */
export function runCount(exported: ExportedHistory): number {
  return 'runs' in exported ? exported.runs.length : 1;
}

/** The accepted updates of an export (every run), optionally only those with a wire name, in history order. */
export function acceptedUpdates(exported: ExportedHistory | History, name?: string): AcceptedUpdate[] {
  const found: AcceptedUpdate[] = [];
  for (const raw of eventsOf(exported)) {
    const request = raw.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    const updateName = request?.input?.name;
    if (!updateName || (name !== undefined && updateName !== name)) continue;
    found.push({
      eventId: Number(raw.eventId ?? 0),
      name: updateName,
      updateId: request?.meta?.updateId ?? '',
      args: (request?.input?.args?.payloads ?? []).map(decodeOrUndefined),
    });
  }
  return found;
}

/** The signals of an export (every run), optionally only those with a name, in history order. */
export function loggedSignals(exported: ExportedHistory | History, name?: string): LoggedSignal[] {
  const found: LoggedSignal[] = [];
  for (const raw of eventsOf(exported)) {
    const signal = raw.workflowExecutionSignaledEventAttributes;
    const signalName = signal?.signalName;
    if (!signalName || (name !== undefined && signalName !== name)) continue;
    const first = signal?.input?.payloads?.[0];
    found.push({ eventId: Number(raw.eventId ?? 0), name: signalName, input: first === undefined ? undefined : decodeOrUndefined(first) });
  }
  return found;
}

/**
 * A copy of an export whose accepted updates named `name` have their first argument replaced by
 * `edit(args)` — the way a person (or a test) corrupts or rewrites a logged entry by hand.
 *
 * @returns the copy and how many updates were edited.
 */
export function editAcceptedUpdates(
  exported: ExportedHistory,
  name: string,
  edit: (firstArgument: unknown, index: number) => unknown,
): { history: ExportedHistory; edited: number } {
  const copy = structuredClone(exported);
  let edited = 0;
  for (const event of historyEventsJson(copy)) {
    const attributes = event.workflowExecutionUpdateAcceptedEventAttributes as
      | { acceptedRequest?: { input?: { name?: string; args?: { payloads?: Array<{ data?: string }> } } } }
      | undefined;
    const input = attributes?.acceptedRequest?.input;
    const payload = input?.args?.payloads?.[0];
    if (input?.name !== name || payload?.data === undefined) continue;
    const value = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')) as unknown;
    payload.data = Buffer.from(JSON.stringify(edit(value, edited))).toString('base64');
    edited++;
  }
  return { history: copy, edited };
}

function eventsOf(exported: ExportedHistory | History): temporal.api.history.v1.IHistoryEvent[] {
  const isProto = Array.isArray((exported as History).events) && typeof (exported as History).events?.[0]?.eventType === 'number';
  const runs = isProto ? [exported as History] : runsOf(exported as ExportedHistory);
  return runs.flatMap((run) => run.events ?? []);
}

function decodeOrUndefined(payload: temporal.api.common.v1.IPayload): unknown {
  try {
    return defaultPayloadConverter.fromPayload(payload);
  } catch {
    return undefined;
  }
}
