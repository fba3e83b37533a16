import { setTimeout as sleep } from 'node:timers/promises';
import { readStream, streamRange, type StreamEntry, type StreamTarget } from '../client/session-stream';
import type { StreamStore } from '../streams';

/** Where a reader begins: an offset, or `current` (the model call in progress, from its first word; else the next words). */
export type StreamStart = number | 'current';

/** What a reader of a session's stream gets. */
export interface StreamListener {
  /** Where its entries begin, once known: the first offset it will be sent, and the stream's end when it began. */
  onStart(position: { from: number; end: number }): void;
  onEntry(entry: StreamEntry): void;
  /** Reading the stream failed (Temporal unreachable, …); it is tried again, and entries resume where they stopped. */
  onProblem(error: unknown): void;
}

/** Most entries a feed keeps for readers that join late or come back; older ones are a `gap` to them. */
const KEPT_ENTRIES = 5000;

/** Pause before reading again after a failure, doubling up to the maximum. */
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 15_000;

/**
 * Reads sessions' streams for many HTTP readers at once: one reader of each session's stream per
 * process, whatever the number of browsers on it (so hundreds of readers of a session cost the
 * store one wait and one read per batch), fanned out to each reader from its own offset.
 * A feed keeps the newest {@link KEPT_ENTRIES} entries, so a reader that reconnects with the last
 * id it got resumes without a gap or a repeat.
 *
 * A feed nobody reads any more stops after its next entry or its next wait; a reader who comes
 * back before then finds it still running.
 */
export class StreamHub {
  private readonly feeds = new Map<string, Feed>();

  constructor(
    private readonly store: StreamStore,
    /** Checked before a feed reads (the HTTP service's check that the workers write to this store); its failure is each reader's `problem`. */
    private readonly check: () => Promise<void> = () => Promise.resolve(),
  ) {}

  /** Starts sending `listener` session `sessionId`'s entries from `start`; returns the function that stops it. */
  subscribe(sessionId: string, start: StreamStart, listener: StreamListener): () => void {
    let feed = this.feeds.get(sessionId);
    if (feed === undefined || feed.finished) {
      const target: StreamTarget = { store: this.store, sessionId };
      const created = new Feed(target, this.check, () => {
        if (this.feeds.get(sessionId) === created) this.feeds.delete(sessionId);
      });
      feed = created;
      this.feeds.set(sessionId, created);
    }
    return feed.add(start, listener);
  }

  /** Ends every feed, cancelling the polls they have in flight. */
  close(): void {
    for (const feed of this.feeds.values()) feed.stop();
    this.feeds.clear();
  }
}

interface Reader {
  listener: StreamListener;
  /** The next offset this reader is to be sent; undefined until its start is decided. */
  next: number | undefined;
  start: StreamStart;
}

class Feed {
  private readonly readers = new Set<Reader>();
  private readonly kept: Array<Extract<StreamEntry, { offset: number }>> = [];
  /** The offset the next entry from the stream will have. */
  private next = 0;
  /** The stream's end when the feed began: entries before it are the ones it already held. */
  private end: number | undefined;
  private caughtUp = false;
  /** Where the feed's first read begins. */
  private readFrom = 0;
  /** Where the model call in progress began (its start or reset), if it has not ended. */
  private callFrom: number | undefined;
  /** Aborted when the service stops: the poll in flight is cancelled, so nothing keeps the process alive. */
  private readonly closing = new AbortController();
  finished = false;

  constructor(
    private readonly target: StreamTarget,
    private readonly check: () => Promise<void>,
    private readonly onFinished: () => void,
  ) {
    void this.run();
  }

  add(start: StreamStart, listener: StreamListener): () => void {
    const reader: Reader = { listener, next: undefined, start };
    this.readers.add(reader);
    if (this.end !== undefined) this.place(reader);
    return () => {
      this.readers.delete(reader);
    };
  }

  stop(): void {
    this.closing.abort();
  }

  /** Decides where `reader` begins, and sends it what is kept from there. */
  private place(reader: Reader): void {
    if (reader.next !== undefined || this.end === undefined) return;
    const end = Math.max(this.end, this.next);
    if (reader.start === 'current') {
      if (!this.caughtUp) return;
      reader.next = this.callFrom ?? end;
    } else {
      reader.next = Math.min(reader.start, end);
    }
    reader.listener.onStart({ from: reader.next, end });
    this.deliver(reader);
  }

  /** Sends `reader` the kept entries from its offset on. */
  private deliver(reader: Reader): void {
    // With nothing kept yet, a gap is told when the first entry comes (its offset shows what is gone).
    for (const entry of this.kept) this.send(reader, entry);
  }

  /** Sends `entry` to `reader` if it is at or past the reader's offset, telling it first of the entries it can no longer get. */
  private send(reader: Reader, entry: StreamEntry): void {
    if (reader.next === undefined) return;
    if (entry.kind === 'gap') {
      if (reader.next < entry.to) {
        reader.listener.onEntry({ kind: 'gap', from: reader.next, to: entry.to });
        reader.next = entry.to;
      }
      return;
    }
    if (entry.offset < reader.next) return;
    if (entry.offset > reader.next) reader.listener.onEntry({ kind: 'gap', from: reader.next, to: entry.offset });
    reader.listener.onEntry(entry);
    reader.next = entry.offset + 1;
  }

  private async run(): Promise<void> {
    let delay = RETRY_MIN_MS;
    try {
      while (!this.closing.signal.aborted) {
        try {
          await this.read();
          return;
        } catch (error) {
          if (this.closing.signal.aborted) return;
          for (const reader of this.readers) reader.listener.onProblem(error);
          await sleep(delay, undefined, { signal: this.closing.signal }).catch(() => undefined);
          delay = Math.min(delay * 2, RETRY_MAX_MS);
        }
      }
    } finally {
      this.finished = true;
      this.onFinished();
    }
  }

  /** Whether nobody reads this feed any more (it then stops at its next entry or wait). */
  private unread(): boolean {
    return this.closing.signal.aborted || this.readers.size === 0;
  }

  private async read(): Promise<void> {
    if (this.end === undefined) {
      await this.check();
      const range = await streamRange(this.target);
      this.end = range.next;
      this.next = range.next;
      // What a feed keeps at most, back from the end: enough to find the call in progress.
      this.readFrom = Math.max(range.first, range.next - KEPT_ENTRIES);
      // A stream that holds nothing sends nothing until its next words: there is nothing to catch up on.
      if (range.first >= range.next) this.catchUp();
      for (const reader of this.readers) this.place(reader);
    }
    const from = this.kept.length > 0 ? this.next : this.readFrom;
    for await (const entry of readStream(this.target, from, { until: () => this.unread(), signal: this.closing.signal })) {
      // Entries the stream no longer holds show as a jump in offsets, which each reader is told of.
      if (entry.kind === 'gap') continue;
      this.next = entry.offset + 1;
      if (entry.kind === 'event') {
        const event = entry.event;
        if (event.type === 'start' || event.type === 'reset') this.callFrom = entry.offset;
        else if (event.type === 'end') this.callFrom = undefined;
      }
      this.keep(entry);
      if (this.next >= (this.end ?? 0)) this.catchUp();
    }
  }

  private keep(entry: Extract<StreamEntry, { offset: number }>): void {
    this.kept.push(entry);
    if (this.kept.length > KEPT_ENTRIES) this.kept.splice(0, this.kept.length - KEPT_ENTRIES);
    for (const reader of this.readers) this.send(reader, entry);
  }

  private catchUp(): void {
    if (this.caughtUp) return;
    this.caughtUp = true;
    for (const reader of this.readers) {
      this.place(reader);
      this.deliver(reader);
    }
  }
}
