import { randomUUID } from 'node:crypto';
import type * as Pg from 'pg';
import type { Client as PgClient, Notification, Pool } from 'pg';
import * as sql from './stream-sql';
import { StreamStoreError, type AppendResult, type StoredEntry, type StreamBatch, type StreamRange, type StreamStore, type StreamStoreIdentity, type StreamStoreStats } from './stream-store';
import { Waiters, waitOn } from './waiters';

/** The channel every append notifies, with `<next offset> <stream>` as its payload. */
export const NOTIFY_CHANNEL = 'agent_sessions_streams';

/** Options of {@link PostgresStreamStore}. */
export interface PostgresStreamStoreOptions {
  /** Connections of the pool (default 10): appends and reads; the one LISTEN connection is apart. */
  poolSize?: number;
}

/**
 * The stream store in a PostgreSQL database of its own: one multi-row insert per batch, and a
 * `pg_notify` in the same transaction that wakes readers when it commits. A process holds one
 * LISTEN connection, opened when its first reader waits, and fans the notices out to its readers
 * in memory.
 */
export class PostgresStreamStore implements StreamStore {
  private readonly pool: Pool;
  private readonly waiters = new Waiters();
  private listener: Promise<PgClient> | undefined;
  private ready: Promise<StreamStoreIdentity> | undefined;
  private reads = 0;
  private appends = 0;
  private closed = false;
  readonly location: string;

  constructor(
    private readonly url: string,
    options: PostgresStreamStoreOptions = {},
  ) {
    // Loaded here, so a process on the SQLite store never loads pg.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pg = require('pg') as typeof Pg;
    this.location = withoutPassword(url);
    this.pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
    // An idle connection that dies is replaced by the pool; saying so is enough.
    this.pool.on('error', () => undefined);
  }

  /** Creates the tables (once per process) and reads the store's id. */
  identity(): Promise<StreamStoreIdentity> {
    this.ready ??= (async () => {
      try {
        const client = await this.pool.connect();
        try {
          // Two processes creating the tables at once would collide in the catalog: one at a time.
          await client.query('SELECT pg_advisory_lock(4242029)');
          try {
            for (const statement of sql.SCHEMA_STATEMENTS) await client.query(statement);
            await client.query(sql.INSERT_ID, [randomUUID()]);
          } finally {
            await client.query('SELECT pg_advisory_unlock(4242029)');
          }
          const id = (await client.query<{ value: string }>(sql.SELECT_ID)).rows[0]?.value ?? '';
          return { kind: 'postgres' as const, location: this.location, id };
        } finally {
          client.release();
        }
      } catch (error) {
        this.ready = undefined;
        throw new StreamStoreError(
          'stream-store-unavailable',
          `the stream store ${this.location} cannot be reached (${(error as Error).message}): check AGENT_SESSIONS_STREAM_STORE, and that the database exists and its user may create tables in it`,
        );
      }
    })();
    return this.ready;
  }

  async append(stream: string, batch: StreamBatch): Promise<AppendResult> {
    await this.identity();
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const now = Date.now();
      await client.query(sql.ENSURE_STREAM, [stream, now]);
      // The stream's row is the lock: two attempts of a call writing at once take turns.
      const row = (await client.query<{ next_offset: string; call: string; attempt: number }>(`${sql.SELECT_STREAM} FOR UPDATE`, [stream])).rows[0]!;
      const plan = sql.planAppend(stream, row, batch, now);
      let result: AppendResult;
      if (plan.kind === 'stale') {
        result = plan;
      } else {
        for (const statement of plan.statements) await client.query(statement.text, statement.params);
        // Delivered when the transaction commits, never before: a woken reader finds the rows.
        await client.query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, `${plan.next} ${stream}`]);
        result = { kind: 'appended', first: plan.first, next: plan.next };
      }
      await client.query('COMMIT');
      this.appends++;
      if (result.kind === 'appended') this.waiters.notify(stream, result.next);
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async read(stream: string, from: number, limit: number = sql.READ_LIMIT): Promise<StoredEntry[]> {
    await this.identity();
    this.reads++;
    const rows = (await this.pool.query<{ chunk_offset: string; body: string }>(sql.SELECT_CHUNKS, [stream, from, limit])).rows;
    return rows.map((row) => ({ offset: Number(row.chunk_offset), body: row.body }));
  }

  async range(stream: string): Promise<StreamRange> {
    await this.identity();
    this.reads++;
    const row = (await this.pool.query<{ next_offset: string | null; first_offset: string | null }>(sql.SELECT_RANGE, [stream])).rows[0];
    return sql.rangeOf(row?.next_offset, row?.first_offset);
  }

  async waitFor(stream: string, next: number, options: { signal?: AbortSignal; maxWaitMs?: number } = {}): Promise<void> {
    if (this.closed) return;
    await this.listen();
    await waitOn(
      this.waiters,
      stream,
      next,
      async () => {
        const row = (await this.pool.query<{ next_offset: string }>(sql.SELECT_NEXT, [stream])).rows[0];
        return row === undefined ? 0 : Number(row.next_offset);
      },
      options,
    );
  }

  /** The process's one LISTEN connection, opened on first use; when it breaks, the next wait opens another (and every waiter reads again). */
  private listen(): Promise<PgClient> {
    this.listener ??= (async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const pg = require('pg') as typeof Pg;
      const client = new pg.Client({ connectionString: this.url });
      const lost = (): void => {
        if (this.listener !== undefined) this.listener = undefined;
        this.waiters.wakeAll();
      };
      client.on('error', lost);
      client.on('end', lost);
      client.on('notification', (notice: Notification) => {
        const payload = notice.payload ?? '';
        const space = payload.indexOf(' ');
        if (space > 0) this.waiters.notify(payload.slice(space + 1), Number(payload.slice(0, space)));
      });
      await client.connect();
      await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
      return client;
    })().catch((error: unknown) => {
      this.listener = undefined;
      throw error;
    });
    return this.listener;
  }

  async sweep(olderThanMs: number, only?: readonly string[]): Promise<number> {
    await this.identity();
    const before = Date.now() - olderThanMs;
    if (only === undefined) return (await this.pool.query(sql.SWEEP, [before])).rowCount ?? 0;
    let count = 0;
    for (const stream of only) count += (await this.pool.query(sql.SWEEP_STREAM, [before, stream])).rowCount ?? 0;
    return count;
  }

  stats(): StreamStoreStats {
    return { reads: this.reads, appends: this.appends, waitsBegun: this.waiters.counts(), peakWaits: this.waiters.peaks() };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const listener = this.listener;
    this.listener = undefined;
    this.waiters.wakeAll();
    await Promise.all([listener?.then((client) => client.end()).catch(() => undefined), this.pool.end()]);
  }
}

/** `url` with its password taken out, for messages and logs. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'a PostgreSQL URL that cannot be read';
  }
}
