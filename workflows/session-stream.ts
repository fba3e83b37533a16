import { allHandlersFinished, ApplicationFailure, condition, setHandler, setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { WorkflowStream, type WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import { streamWorkflowId } from '../src/session/model-stream';
import { guardedStream } from './stream-guards';
import { streamRangeQuery, type SessionStreamInput, type SessionStreamResult } from './stream-messages';

/** A stream that received nothing for this long closes; the next model call (or reader) starts it again. */
export const STREAM_IDLE_MS = 10 * 60_000;

/** How often a stream looks whether it has been quiet long enough to close. */
const IDLE_CHECK_MS = 60_000;

/** The most entries a stream carries into its next run; older ones are dropped (truncated). */
export const STREAM_CARRIED_ENTRIES = 2000;

/** The most bytes of entries (as carried, base64) a stream carries into its next run. */
export const STREAM_CARRIED_BYTES = 512 * 1024;

/** The largest offset a stream accepts to begin at: where a number stops counting exactly. */
const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

/**
 * A session's companion stream: the words of its model calls as they are written, in an offset
 * log held by `@temporalio/workflow-streams` (publishers signal batches, readers long-poll an
 * update from an offset). It is not the session: its history holds the deltas so that the
 * session's holds none, and it never touches the session.
 *
 * It is started by whoever needs it first (the model call activity, or a reader), continues as
 * new when Temporal suggests it, carrying only its newest entries ({@link STREAM_CARRIED_ENTRIES},
 * {@link STREAM_CARRIED_BYTES}: older offsets are then truncated), and closes after
 * {@link STREAM_IDLE_MS} without a new entry, answering the offset its next entry would have had
 * (the next run begins there, so offsets never go back).
 *
 * Its input is checked like a session's: anyone who can start a workflow can send any input; and
 * so are its publish signals and poll updates ({@link guardedStream}).
 */
export async function sessionStream(input: SessionStreamInput): Promise<SessionStreamResult> {
  const checked = checkStreamInput(input);
  // The library's handlers trust their input; anyone who can reach Temporal can signal a stream.
  const stream = guardedStream(() => new WorkflowStream(checked.state ?? { log: [], base_offset: checked.firstOffset ?? 0, publisher_sequences: {}, publisher_last_seen: {} }));
  const idleMs = checked.idleMs ?? STREAM_IDLE_MS;
  const range = (): { first: number; next: number } => {
    const state = stream.getState();
    return { first: state.base_offset, next: state.base_offset + state.log.length };
  };
  const nextOffset = (): number => range().next;
  setHandler(streamRangeQuery, range);
  let seen = nextOffset();
  let quietSince = Date.now();
  for (;;) {
    const roll = await condition(() => workflowInfo().continueAsNewSuggested, Math.min(IDLE_CHECK_MS, idleMs));
    if (roll) {
      await stream.continueAsNew<typeof sessionStream>((state) => [{ sessionId: checked.sessionId, ...(checked.idleMs !== undefined ? { idleMs: checked.idleMs } : {}), state: newestEntries(state) }]);
    }
    const now = nextOffset();
    if (now !== seen) {
      seen = now;
      quietSince = Date.now();
      continue;
    }
    if (Date.now() - quietSince < idleMs) continue;
    // Readers waiting on a poll are answered (with nothing) and find the stream closed.
    stream.detachPollers();
    await condition(allHandlersFinished);
    if (nextOffset() === seen) return { nextOffset: seen };
    // Words came while it was closing: the detached stream takes no more polls, so go on in a new run.
    await stream.continueAsNew<typeof sessionStream>((state) => [{ sessionId: checked.sessionId, ...(checked.idleMs !== undefined ? { idleMs: checked.idleMs } : {}), state: newestEntries(state) }]);
  }
}

// A stream holds no decision that outlives it and closes within minutes of going quiet: it
// moves to the newest build at its next task rather than keeping an old build's workers busy.
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, sessionStream);

/** The newest entries of `state` that fit {@link STREAM_CARRIED_ENTRIES} and {@link STREAM_CARRIED_BYTES}. */
function newestEntries(state: WorkflowStreamState): WorkflowStreamState {
  let keep = 0;
  let bytes = 0;
  for (let i = state.log.length - 1; i >= 0 && keep < STREAM_CARRIED_ENTRIES; i--) {
    const entry = state.log[i]!;
    bytes += entry.data.length + entry.topic.length;
    if (bytes > STREAM_CARRIED_BYTES) break;
    keep++;
  }
  const dropped = state.log.length - keep;
  return { ...state, log: state.log.slice(dropped), base_offset: state.base_offset + dropped };
}

/** A stream's input, checked against the run: the id is the session's stream id, offsets are whole numbers, a carried log only in a continued run. */
function checkStreamInput(input: unknown): SessionStreamInput {
  const info = workflowInfo();
  const refuse = (detail: string): never => {
    throw ApplicationFailure.create({ type: 'InvalidStreamInput', nonRetryable: true, message: `stream ${JSON.stringify(info.workflowId)} cannot start: ${detail}` });
  };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return refuse('its input must be an object {"sessionId": …}');
  const { sessionId, firstOffset, state, idleMs, ...extra } = input as Record<string, unknown>;
  if (Object.keys(extra).length > 0) refuse(`its input has unknown properties ${Object.keys(extra).slice(0, 5).join(', ')}; allowed: sessionId, firstOffset, state, idleMs`);
  if (typeof sessionId !== 'string' || streamWorkflowId(sessionId) !== info.workflowId) refuse(`sessionId must be the session whose stream this is (${info.workflowId} is <session id>/~stream)`);
  const whole = (value: unknown, min: number, max: number): boolean => typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
  if (firstOffset !== undefined && !whole(firstOffset, 0, MAX_OFFSET)) refuse(`firstOffset must be a whole number from 0, got ${JSON.stringify(firstOffset)}`);
  if (idleMs !== undefined && !whole(idleMs, 1000, 24 * 3_600_000)) refuse(`idleMs must be a whole number of milliseconds from 1000 to 86400000, got ${JSON.stringify(idleMs)}`);
  if (state !== undefined) {
    if (info.continuedFromExecutionRunId === undefined) refuse('a carried log is accepted only in a run that continued from an earlier run of the same stream');
    const carried = state as Partial<WorkflowStreamState> | null;
    if (typeof carried !== 'object' || carried === null || !Array.isArray(carried.log) || !whole(carried.base_offset, 0, MAX_OFFSET)) refuse('state must be a carried stream log');
  }
  return {
    sessionId: sessionId as string,
    ...(firstOffset !== undefined ? { firstOffset: firstOffset as number } : {}),
    ...(state !== undefined ? { state: state as WorkflowStreamState } : {}),
    ...(idleMs !== undefined ? { idleMs: idleMs as number } : {}),
  };
}
