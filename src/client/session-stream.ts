import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { WorkflowStreamClient, type PublishInput } from '@temporalio/workflow-streams/client';
import { MAX_EVENT_TEXT, MODEL_STREAM_TOPIC, parseModelStreamEvent, streamWorkflowId, type ModelStreamEvent } from '../session/model-stream';
import { SESSION_STREAM_WORKFLOW_TYPE, streamRangeQuery, type SessionStreamInput, type SessionStreamResult, type StreamRange } from '../../workflows/stream-messages';
import { withBusyRetry } from './transient-errors';

/** The Workflow Streams publish signal: a batch of entries, deduplicated by publisher and sequence. */
const PUBLISH_SIGNAL = '__temporal_workflow_stream_publish';
/** The Workflow Streams offset query: where the next entry will be. */
const OFFSET_QUERY = '__temporal_workflow_stream_offset';

/** Which session's stream, reached through which client and on which task queue (the session's, where its workers poll). */
export interface StreamTarget {
  client: Client;
  taskQueue: string;
  sessionId: string;
  /** How long a stream this target starts stays open without a new entry (default: the workflow's 10 minutes). */
  idleMs?: number;
}

/**
 * Makes sure session `target.sessionId`'s stream runs, and sends `publish` to it (nothing, by
 * default): a stream that runs gets the signal; when none runs, one is started with it
 * (signal-with-start, so two callers starting at once make one), beginning at the offset where the
 * session's previous stream ended, so that offsets never go back and a reader's position stays
 * meaningful across the stream's lives.
 */
export async function openStream(target: StreamTarget, publish: PublishInput = { items: [], publisher_id: '', sequence: 0 }): Promise<void> {
  const workflowId = streamWorkflowId(target.sessionId);
  try {
    await target.client.workflow.getHandle(workflowId).signal(PUBLISH_SIGNAL, publish);
    return;
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  const input: SessionStreamInput = {
    sessionId: target.sessionId,
    firstOffset: await endOfClosedStream(target.client, workflowId),
    ...(target.idleMs !== undefined ? { idleMs: target.idleMs } : {}),
  };
  await target.client.workflow.signalWithStart(SESSION_STREAM_WORKFLOW_TYPE, {
    workflowId,
    taskQueue: target.taskQueue,
    args: [input],
    signal: PUBLISH_SIGNAL,
    signalArgs: [publish],
  });
}

/** Where a stream that no longer runs ended: its result, else what its offset query answers, else 0 (none ever ran, or it is past retention). */
async function endOfClosedStream(client: Client, workflowId: string): Promise<number> {
  let runId: string;
  let status: string;
  try {
    const described = await client.workflow.getHandle(workflowId).describe();
    runId = described.runId;
    status = described.status.name;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 0;
    throw error;
  }
  const run = client.workflow.getHandle(workflowId, runId, { followRuns: false });
  try {
    if (status === 'COMPLETED') return wholeOffset((await run.result()) as SessionStreamResult | undefined);
    // Terminated or timed out: its log still says where it stood (a worker replays it to answer).
    return wholeOffset({ nextOffset: await client.connection.withDeadline(Date.now() + 5000, () => run.query<number>(OFFSET_QUERY)) });
  } catch {
    return 0;
  }
}

function wholeOffset(result: SessionStreamResult | undefined): number {
  const offset = result?.nextOffset;
  return typeof offset === 'number' && Number.isSafeInteger(offset) && offset >= 0 ? offset : 0;
}

/**
 * Which offsets session `target.sessionId`'s stream holds now: from `first` (older entries are
 * gone) up to `next`, the offset its next entry will have (starting the stream when none runs, so
 * the answer holds for the words to come).
 */
export async function streamRange(target: StreamTarget): Promise<StreamRange> {
  await openStream(target);
  return withBusyRetry(() => target.client.workflow.getHandle(streamWorkflowId(target.sessionId)).query(streamRangeQuery));
}

/** Where session `target.sessionId`'s stream stands: the offset its next entry will have (see {@link streamRange}). */
export async function streamEnd(target: StreamTarget): Promise<number> {
  return (await streamRange(target)).next;
}

/**
 * How long a publisher gathers words before it sends them: five times a second reads as fluent
 * text, and each batch costs a signal, a workflow task and every reader's poll.
 */
export const DEFAULT_STREAM_BATCH_MS = 200;

/** Options of {@link streamPublisher}. */
export interface StreamPublisherOptions {
  /** How long words are gathered before they are sent (default {@link DEFAULT_STREAM_BATCH_MS}); the first of each call goes at once. */
  batchMs?: number;
  /** How long a batch is retried before it is given up (default 30 s): words are never worth stalling a model call for. */
  maxRetryMs?: number;
}

/** What a model call activity publishes through: events in, batched signals out. */
export interface StreamPublisher {
  /** Queues `event`; `now` sends what is queued without waiting for the batch interval. */
  publish(event: ModelStreamEvent, now?: boolean): void;
  /** Sends what is queued and stops; resolves once the stream has it, or fails with why it could not. */
  close(): Promise<void>;
}

/**
 * A publisher to session `target.sessionId`'s stream: Workflow Streams' own client (batched
 * signals, deduplicated by publisher and sequence), whose signals start the stream when it does
 * not run (see {@link openStream}).
 *
 * Text (and a tool call's arguments) that comes within one batch interval is sent as one event:
 * a model writes a token at a time, and an entry per token would cost the stream, the worker and
 * every reader tens of times what an entry per tenth of a second does, for words no reader can
 * see faster.
 */
export function streamPublisher(target: StreamTarget, options: StreamPublisherOptions = {}): StreamPublisher {
  const batchMs = options.batchMs ?? DEFAULT_STREAM_BATCH_MS;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  const real = target.client.workflow.getHandle(streamWorkflowId(target.sessionId));
  const handle: WorkflowHandle = {
    ...real,
    signal: (async (_name: unknown, input: PublishInput) => openStream(target, input)) as WorkflowHandle['signal'],
  };
  // Batches are handed to the library one at a time and flushed: the library itself would send
  // everything queued behind a slow signal as one signal, past gRPC's 4 MB message once the
  // words come faster than signals go.
  const publisher = new WorkflowStreamClient(handle, { batchInterval: 1000, maxRetryDuration: maxRetryMs });
  const topic = publisher.topic<ModelStreamEvent>(MODEL_STREAM_TOPIC);
  const ready: ModelStreamEvent[] = [];
  let held: ModelStreamEvent | undefined;
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> | undefined;
  let failure: unknown;
  const send = (): Promise<void> =>
    (sending ??= (async () => {
      try {
        while (ready.length > 0 && failure === undefined) {
          let bytes = 0;
          let count = 0;
          while (count < ready.length && (count === 0 || bytes + entryBytes(ready[count]!) <= MAX_BATCH_BYTES)) bytes += entryBytes(ready[count++]!);
          for (const event of ready.splice(0, count)) topic.publish(event);
          await flushPatiently(publisher, maxRetryMs).catch((error: unknown) => (failure = error));
        }
      } finally {
        sending = undefined;
      }
      if (ready.length > 0 && failure === undefined) await send();
    })());
  const handOver = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (held !== undefined) ready.push(held);
    held = undefined;
    void send();
  };
  return {
    publish(event, now = false) {
      if (held !== undefined && joins(held, event)) held = { ...held, text: held.text + (event as { text: string }).text };
      else {
        if (held !== undefined) ready.push(held);
        held = event;
      }
      if (now) handOver();
      else timer ??= setTimeout(handOver, batchMs);
    },
    async close() {
      handOver();
      while (sending !== undefined) await sending;
      await publisher[Symbol.asyncDispose]();
      if (failure !== undefined) throw failure;
    },
  };
}

/** The most a batch of entries may weigh (their JSON, base64 in the signal): far below gRPC's 4 MB and Temporal's 2 MB payload. */
const MAX_BATCH_BYTES = 512 * 1024;

function entryBytes(event: ModelStreamEvent): number {
  return Math.ceil((Buffer.byteLength(JSON.stringify(event)) * 4) / 3) + 64;
}

/** Flushes, retrying a failed signal (same batch, same sequence: applied once) until the library gives it up. */
async function flushPatiently(publisher: WorkflowStreamClient, maxRetryMs: number): Promise<void> {
  const deadline = Date.now() + maxRetryMs + 1000;
  for (let pause = 100; ; pause = Math.min(pause * 2, 2000)) {
    try {
      return await publisher.flush();
    } catch (error) {
      if (Date.now() > deadline || (error instanceof Error && error.name === 'FlushTimeoutError')) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** Whether `next` only adds to `held`'s text: more text of the same call, or more arguments of the same tool call, within an event's size. */
function joins(held: ModelStreamEvent, next: ModelStreamEvent): held is Extract<ModelStreamEvent, { text: string }> {
  if (held.call !== next.call || held.attempt !== next.attempt || held.type !== next.type) return false;
  if (held.type === 'text' && next.type === 'text') return held.text.length + next.text.length <= MAX_EVENT_TEXT;
  if (held.type === 'arguments' && next.type === 'arguments') return held.index === next.index && held.text.length + next.text.length <= MAX_EVENT_TEXT;
  return false;
}

/** One entry of a session's stream as a reader gets it. */
export type StreamEntry =
  | { kind: 'event'; offset: number; event: ModelStreamEvent }
  /** An entry that is not a model stream event (written by some other client): passed over, but its offset counts. */
  | { kind: 'malformed'; offset: number }
  /** Entries from `from` up to `to` (excluded) are no longer kept (the stream was truncated, or closed and started again). */
  | { kind: 'gap'; from: number; to: number };

/** Options of {@link readStream}. */
export interface ReadStreamOptions {
  /** Stops the reading: the generator returns at once, and the poll in flight is cancelled. */
  signal?: AbortSignal;
  /** The pause between two polls that found entries (default 10 ms): the publisher batches already, and a reader waits for words it could have. */
  pollCooldownMs?: number;
  /**
   * Asked after each entry and whenever the stream closed: true ends the reading there, with no
   * poll left in flight (a reader that must not leave one, unlike `signal`, which ends at once).
   */
  until?: () => boolean;
}

/**
 * Reads session `target.sessionId`'s stream from offset `from` on, until `options.signal`
 * aborts: every entry once, in offset order, following the stream through continue-as-new and
 * through its closing and starting again (a reader starts it when none runs, so it can wait for
 * the next words). Entries the stream no longer holds come out as one `gap`.
 */
export async function* readStream(target: StreamTarget, from: number, options: ReadStreamOptions = {}): AsyncGenerator<StreamEntry, void, undefined> {
  const { signal } = options;
  const stopped = new Promise<'stopped'>((resolve) => {
    if (signal?.aborted === true) resolve('stopped');
    signal?.addEventListener('abort', () => resolve('stopped'), { once: true });
  });
  let next = from;
  while (signal?.aborted !== true && options.until?.() !== true) {
    await openStream(target);
    const reader = WorkflowStreamClient.create(target.client, streamWorkflowId(target.sessionId));
    const items = reader.subscribe([MODEL_STREAM_TOPIC], next, { pollCooldown: options.pollCooldownMs ?? 10 });
    for (;;) {
      // The poll runs under the signal, so stopping cancels it rather than leaving it to wait out its long poll.
      const polled = signal !== undefined ? target.client.withAbortSignal(signal, () => items.next()) : items.next();
      const step = await Promise.race([polled, stopped]);
      if (step === 'stopped') {
        void polled.catch(() => undefined);
        return;
      }
      if (step.done === true) break;
      const item = step.value;
      if (item.offset < next) continue;
      if (item.offset > next) yield { kind: 'gap', from: next, to: item.offset };
      next = item.offset + 1;
      let event: ModelStreamEvent | undefined;
      try {
        event = parseModelStreamEvent(defaultPayloadConverter.fromPayload(item.data));
      } catch {
        event = undefined;
      }
      yield event !== undefined ? { kind: 'event', offset: item.offset, event } : { kind: 'malformed', offset: item.offset };
      if (options.until?.() === true) {
        void items.return(undefined).catch(() => undefined);
        return;
      }
    }
    // The stream closed after a quiet while: start it again (where it ended) and wait on.
  }
}
