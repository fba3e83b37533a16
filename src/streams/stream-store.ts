/**
 * The stream store: where a model call's words go while it runs, outside Temporal (DESIGN §13).
 * One small interface, two backends sharing one SQL shape (`stream-sql.ts`): PostgreSQL for a
 * deployment (`postgres-stream-store.ts`), a SQLite file for one machine
 * (`sqlite-stream-store.ts`), chosen by one setting (`open-stream-store.ts`). Only the worker
 * writes (the model call activity appends, the worker sweeps); the HTTP service and `chat` read.
 */

/** A batch of one model call's events, written by one attempt of the call. */
export interface StreamBatch {
  /** The call (the session's run and the activity): the same on every attempt. */
  call: string;
  /** The activity's attempt: a batch of an attempt older than the newest one the store has seen for this call is dropped. */
  attempt: number;
  /** The events, each stored as its JSON. */
  events: readonly unknown[];
}

/** What an append did: the offsets its entries got (`first` up to `next`, excluded), or `stale` when a newer attempt of the call already wrote. */
export type AppendResult = { kind: 'appended'; first: number; next: number } | { kind: 'stale'; attempt: number };

/** One stored entry as a reader gets it: its offset and its JSON text (which a reader checks: it may be anything). */
export interface StoredEntry {
  offset: number;
  body: string;
}

/** Which offsets a stream holds: from `first` (older ones were swept) up to `next`, the offset its next entry will have. */
export interface StreamRange {
  first: number;
  next: number;
}

/** What a store says about itself: shown at start and compared between the worker and the HTTP service. */
export interface StreamStoreIdentity {
  /** `postgres` or `sqlite`. */
  kind: 'postgres' | 'sqlite';
  /** Where it is, with no password: `postgres://user@host:port/db`, or the SQLite file's path. */
  location: string;
  /** A random id written when the store's tables were created: two stores never share it. */
  id: string;
}

/** Counts a store keeps of its readers, for tests and benchmarks. */
export interface StreamStoreStats {
  /** Queries made for readers (reads of entries and of ranges). */
  reads: number;
  /** Batches appended. */
  appends: number;
  /** Waits begun for more entries, by stream: what one HTTP service's readers of a session cost the store. */
  waitsBegun: ReadonlyMap<string, number>;
  /** The most waits on each stream at one time: 1 when one HTTP service serves any number of readers of a session. */
  peakWaits: ReadonlyMap<string, number>;
}

/**
 * A stream store. Offsets of a stream start at 0 and never go back, also across calls and after a
 * sweep; entries of a stream are read in offset order.
 */
export interface StreamStore {
  /** The store's identity; its tables are created first if they are missing. */
  identity(): Promise<StreamStoreIdentity>;
  /** Appends `batch` to `stream` as one write (one multi-row insert), waking its readers. */
  append(stream: string, batch: StreamBatch): Promise<AppendResult>;
  /** Up to `limit` entries of `stream` from offset `from` on, in order (none when it holds none there yet). */
  read(stream: string, from: number, limit?: number): Promise<StoredEntry[]>;
  /** Which offsets `stream` holds now (`{first: 0, next: 0}` for a stream never written). */
  range(stream: string): Promise<StreamRange>;
  /**
   * Resolves once `stream` holds an entry at or past `next`, when `signal` aborts, or after
   * `maxWaitMs` (the caller then reads again): a reader's wait for the next words.
   */
  waitFor(stream: string, next: number, options?: { signal?: AbortSignal; maxWaitMs?: number }): Promise<void>;
  /**
   * Drops every entry written more than `olderThanMs` ago (of the streams named in `only`, when
   * given: the words of sessions being deleted, or a test's own); answers how many. Offsets stay
   * where they were.
   */
  sweep(olderThanMs: number, only?: readonly string[]): Promise<number>;
  /** Counts of the reading this store did (see {@link StreamStoreStats}). */
  stats(): StreamStoreStats;
  /** Closes its connections; waits in progress resolve. */
  close(): Promise<void>;
}

/** The base of the stream store's errors, with a machine-readable code. */
export class StreamStoreError extends Error {
  override readonly name: string = 'StreamStoreError';
  constructor(
    readonly code: 'stream-store-setting' | 'stream-store-unavailable' | 'stream-store-mismatch',
    message: string,
  ) {
    super(message);
  }
}
