import { MAX_EVENT_TEXT, parseModelStreamEvent, type ModelStreamEvent } from '../session/model-stream';
import type { StreamRange, StreamStore } from '../streams';

/** Which session's stream, in which stream store. */
export interface StreamTarget {
  store: StreamStore;
  sessionId: string;
}

/** Which offsets session `target.sessionId`'s stream holds now: from `first` (older entries were swept) up to `next`, the offset its next entry will have. */
export function streamRange(target: StreamTarget): Promise<StreamRange> {
  return target.store.range(target.sessionId);
}

/** Where session `target.sessionId`'s stream stands: the offset its next entry will have. */
export async function streamEnd(target: StreamTarget): Promise<number> {
  return (await streamRange(target)).next;
}

/**
 * How long a publisher gathers words before it writes them: five times a second reads as fluent
 * text, and each batch is one insert into the store.
 */
export const DEFAULT_STREAM_BATCH_MS = 200;

/** Options of {@link streamPublisher}. */
export interface StreamPublisherOptions {
  /** How long words are gathered before they are written (default {@link DEFAULT_STREAM_BATCH_MS}); the first of each call go at once. */
  batchMs?: number;
  /** How long a batch is retried before it is given up (default 30 s): words are never worth stalling a model call for. */
  maxRetryMs?: number;
}

/** What a model call activity publishes through: events in, batched appends out. */
export interface StreamPublisher {
  /** Queues `event`; `now` writes what is queued without waiting for the batch interval. */
  publish(event: ModelStreamEvent, now?: boolean): void;
  /** Writes what is queued and stops; resolves once the store has it, or fails with why it could not. */
  close(): Promise<void>;
}

/**
 * A publisher to session `target.sessionId`'s stream: one append (one multi-row insert) per
 * batch, with the call's attempt, so the store drops what an attempt writes after a newer attempt
 * of the same call began.
 *
 * Text (and a tool call's arguments) that comes within one batch interval is written as one
 * event: a model writes a token at a time, and an entry per token would cost the store and every
 * reader tens of times what an entry per tenth of a second does, for words no reader can see faster.
 */
export function streamPublisher(target: StreamTarget, options: StreamPublisherOptions = {}): StreamPublisher {
  const batchMs = options.batchMs ?? DEFAULT_STREAM_BATCH_MS;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  const ready: ModelStreamEvent[] = [];
  let held: ModelStreamEvent | undefined;
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> | undefined;
  let failure: unknown;
  const send = (): Promise<void> =>
    (sending ??= (async () => {
      try {
        while (ready.length > 0 && failure === undefined) {
          // One call and attempt per append: the store keys what it drops on them.
          const head = ready[0]!;
          let count = 0;
          let bytes = 0;
          while (count < ready.length && ready[count]!.call === head.call && ready[count]!.attempt === head.attempt && (count === 0 || bytes + entryBytes(ready[count]!) <= MAX_BATCH_BYTES)) {
            bytes += entryBytes(ready[count++]!);
          }
          const events = ready.splice(0, count);
          await appendPatiently(target, { call: head.call, attempt: head.attempt, events }, maxRetryMs).catch((error: unknown) => (failure = error));
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
      if (failure !== undefined) throw failure;
    },
  };
}

/** The most one batch may weigh (its JSON): one insert, far below what either database takes in one statement. */
const MAX_BATCH_BYTES = 512 * 1024;

function entryBytes(event: ModelStreamEvent): number {
  return Buffer.byteLength(JSON.stringify(event)) + 64;
}

/** Appends, retrying a failed write (the store unreachable for a moment) until `maxRetryMs` has passed. */
async function appendPatiently(target: StreamTarget, batch: { call: string; attempt: number; events: ModelStreamEvent[] }, maxRetryMs: number): Promise<void> {
  const deadline = Date.now() + maxRetryMs;
  for (let pause = 100; ; pause = Math.min(pause * 2, 2000)) {
    try {
      await target.store.append(target.sessionId, batch);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
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
  /** An entry that is not a model stream event (a row no reader can use): passed over, but its offset counts. */
  | { kind: 'malformed'; offset: number }
  /** Entries from `from` up to `to` (excluded) are no longer kept (the retention sweep dropped them). */
  | { kind: 'gap'; from: number; to: number };

/** Options of {@link readStream}. */
export interface ReadStreamOptions {
  /** Stops the reading: the generator returns at once, and the wait in progress ends. */
  signal?: AbortSignal;
  /** Asked after each entry and after each wait: true ends the reading there. */
  until?: () => boolean;
}

/**
 * Reads session `target.sessionId`'s stream from offset `from` on, until `options.signal`
 * aborts: every entry once, in offset order, waiting for more when it has read all there is.
 * Entries the store no longer holds come out as one `gap`; an entry that is not a model event
 * as `malformed` (a reader passes it over and goes on).
 */
export async function* readStream(target: StreamTarget, from: number, options: ReadStreamOptions = {}): AsyncGenerator<StreamEntry, void, undefined> {
  const { signal } = options;
  let next = from;
  while (signal?.aborted !== true && options.until?.() !== true) {
    const entries = await target.store.read(target.sessionId, next);
    if (entries.length === 0) {
      // Nothing at `next`: either nothing is written yet, or what was there was swept.
      const range = await target.store.range(target.sessionId);
      if (range.next > next) {
        const to = Math.min(range.first, range.next);
        if (to > next) {
          yield { kind: 'gap', from: next, to };
          next = to;
        }
        continue;
      }
      await target.store.waitFor(target.sessionId, next, signal !== undefined ? { signal } : {});
      continue;
    }
    for (const stored of entries) {
      if (isAborted(signal)) return;
      if (stored.offset < next) continue;
      if (stored.offset > next) yield { kind: 'gap', from: next, to: stored.offset };
      next = stored.offset + 1;
      yield entryOf(stored.offset, stored.body);
      if (options.until?.() === true) return;
    }
  }
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** A stored body as a reader's entry: a model event, or `malformed` whatever is wrong with it. */
function entryOf(offset: number, body: string): StreamEntry {
  let event: ModelStreamEvent | undefined;
  try {
    event = parseModelStreamEvent(JSON.parse(body));
  } catch {
    event = undefined;
  }
  return event !== undefined ? { kind: 'event', offset, event } : { kind: 'malformed', offset };
}
