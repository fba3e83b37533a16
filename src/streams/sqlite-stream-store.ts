import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type * as NodeSqlite from 'node:sqlite';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import * as sql from './stream-sql';
import { StreamStoreError, type AppendResult, type StoredEntry, type StreamBatch, type StreamRange, type StreamStore, type StreamStoreIdentity, type StreamStoreStats } from './stream-store';
import { Waiters, waitOn } from './waiters';

/** Options of {@link SqliteStreamStore}. */
export interface SqliteStreamStoreOptions {
  /**
   * How often a reader's process looks at the file for entries another process wrote (default
   * 25 ms): SQLite has no NOTIFY, and `PRAGMA data_version` is a read of one page header.
   */
  pollMs?: number;
}

/**
 * The stream store in one SQLite file (Node's built-in `node:sqlite`), for one machine: the worker
 * and the HTTP service may be separate processes (WAL mode lets readers read while the worker
 * writes). A reader in another process learns of new entries by polling the file's
 * `data_version` while it waits (every 25 ms by default); one in the writer's process is woken at once.
 */
export class SqliteStreamStore implements StreamStore {
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private readonly waiters = new Waiters();
  private readonly pollMs: number;
  private poller: NodeJS.Timeout | undefined;
  private dataVersion = -1;
  private reads = 0;
  private appends = 0;
  private closed = false;
  private readonly identityRead: StreamStoreIdentity;

  constructor(
    readonly file: string,
    options: SqliteStreamStoreOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 25;
    const path = resolve(file);
    let sqlite: typeof NodeSqlite;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      sqlite = require('node:sqlite') as typeof NodeSqlite;
    } catch {
      throw new StreamStoreError(
        'stream-store-setting',
        `the SQLite stream store needs Node 22.13 or newer (node:sqlite), this is Node ${process.versions.node}: run on Node 24, or set AGENT_SESSIONS_STREAM_STORE to a postgres:// URL`,
      );
    }
    try {
      mkdirSync(dirname(path), { recursive: true });
      this.db = new sqlite.DatabaseSync(path, { timeout: 5000 });
      this.db.exec('PRAGMA journal_mode = WAL');
      this.db.exec('PRAGMA synchronous = NORMAL');
      for (const statement of sql.SCHEMA_STATEMENTS) this.db.exec(statement);
      this.prepare(sql.INSERT_ID).run(randomUUID());
      const id = String((this.prepare(sql.SELECT_ID).get() as { value: string }).value);
      this.identityRead = { kind: 'sqlite', location: path, id };
    } catch (error) {
      if (error instanceof StreamStoreError) throw error;
      throw new StreamStoreError('stream-store-unavailable', `the stream store file ${path} cannot be opened (${(error as Error).message}): check that its folder is writable, or set AGENT_SESSIONS_STREAM_STORE to another file`);
    }
  }

  private prepare(text: string): StatementSync {
    let statement = this.statements.get(text);
    if (statement === undefined) {
      // `$1` is PostgreSQL's placeholder; `?1` is SQLite's numbered one, bound by position alike.
      statement = this.db.prepare(text.replace(/\$(\d+)/g, '?$1'));
      this.statements.set(text, statement);
    }
    return statement;
  }

  identity(): Promise<StreamStoreIdentity> {
    return Promise.resolve(this.identityRead);
  }

  append(stream: string, batch: StreamBatch): Promise<AppendResult> {
    const now = Date.now();
    this.db.exec('BEGIN IMMEDIATE');
    let result: AppendResult;
    try {
      this.prepare(sql.ENSURE_STREAM).run(stream, now);
      const row = this.prepare(sql.SELECT_STREAM).get(stream) as { next_offset: number; call: string; attempt: number };
      const plan = sql.planAppend(stream, row, batch, now);
      if (plan.kind === 'stale') {
        result = plan;
      } else {
        for (const statement of plan.statements) this.prepare(statement.text).run(...(statement.params as Array<string | number>));
        result = { kind: 'appended', first: plan.first, next: plan.next };
      }
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
    this.appends++;
    if (result.kind === 'appended') this.waiters.notify(stream, result.next);
    return Promise.resolve(result);
  }

  read(stream: string, from: number, limit: number = sql.READ_LIMIT): Promise<StoredEntry[]> {
    this.reads++;
    const rows = this.prepare(sql.SELECT_CHUNKS).all(stream, from, limit) as Array<{ chunk_offset: number; body: string }>;
    return Promise.resolve(rows.map((row) => ({ offset: Number(row.chunk_offset), body: String(row.body) })));
  }

  range(stream: string): Promise<StreamRange> {
    this.reads++;
    const row = this.prepare(sql.SELECT_RANGE).get(stream) as { next_offset: unknown; first_offset: unknown };
    return Promise.resolve(sql.rangeOf(row.next_offset, row.first_offset));
  }

  private nextOf(stream: string): number {
    const row = this.prepare(sql.SELECT_NEXT).get(stream) as { next_offset: number } | undefined;
    return row === undefined ? 0 : Number(row.next_offset);
  }

  async waitFor(stream: string, next: number, options: { signal?: AbortSignal; maxWaitMs?: number } = {}): Promise<void> {
    if (this.closed) return;
    this.startPolling();
    try {
      await waitOn(this.waiters, stream, next, () => Promise.resolve(this.nextOf(stream)), options);
    } finally {
      if (this.waiters.size === 0) this.stopPolling();
    }
  }

  /** While someone waits: every `pollMs`, when another connection changed the file, tells the waiters where their streams end. */
  private startPolling(): void {
    if (this.poller !== undefined) return;
    this.poller = setInterval(() => {
      if (this.closed) return;
      const version = Number((this.db.prepare('PRAGMA data_version').get() as { data_version: number }).data_version);
      if (version === this.dataVersion) return;
      this.dataVersion = version;
      for (const stream of this.waiters.streams()) this.waiters.notify(stream, this.nextOf(stream));
    }, this.pollMs);
    this.poller.unref();
  }

  private stopPolling(): void {
    clearInterval(this.poller);
    this.poller = undefined;
  }

  sweep(olderThanMs: number, only?: readonly string[]): Promise<number> {
    const before = Date.now() - olderThanMs;
    if (only === undefined) return Promise.resolve(Number(this.prepare(sql.SWEEP).run(before).changes));
    return Promise.resolve(only.reduce((count, stream) => count + Number(this.prepare(sql.SWEEP_STREAM).run(before, stream).changes), 0));
  }

  stats(): StreamStoreStats {
    return { reads: this.reads, appends: this.appends, waitsBegun: this.waiters.counts(), peakWaits: this.waiters.peaks() };
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.stopPolling();
    this.waiters.wakeAll();
    this.db.close();
    return Promise.resolve();
  }
}
