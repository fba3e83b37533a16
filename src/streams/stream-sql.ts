/**
 * The SQL both backends share: the same three tables and the same statements, `$1`-style
 * placeholders (PostgreSQL's; SQLite reads `$1` as a named parameter, bound by position here too).
 *
 * - `stream_store`: the store's own facts (its id, written once with the tables).
 * - `streams`: one row per stream, its next offset and the newest attempt of its newest call,
 *   kept when entries are swept, so offsets never go back.
 * - `stream_chunks`: the entries, append-only, keyed by stream and offset, with when they were
 *   written (for the retention sweep).
 */
export const SCHEMA_STATEMENTS: readonly string[] = [
  'CREATE TABLE IF NOT EXISTS stream_store (key TEXT PRIMARY KEY, value TEXT NOT NULL)',
  'CREATE TABLE IF NOT EXISTS streams (stream TEXT PRIMARY KEY, next_offset BIGINT NOT NULL, call TEXT NOT NULL, attempt INTEGER NOT NULL, updated_at BIGINT NOT NULL)',
  'CREATE TABLE IF NOT EXISTS stream_chunks (stream TEXT NOT NULL, chunk_offset BIGINT NOT NULL, attempt INTEGER NOT NULL, body TEXT NOT NULL, written_at BIGINT NOT NULL, PRIMARY KEY (stream, chunk_offset))',
  'CREATE INDEX IF NOT EXISTS stream_chunks_written_at ON stream_chunks (written_at)',
];

/** Writes the store's id unless it has one. */
export const INSERT_ID = "INSERT INTO stream_store (key, value) VALUES ('id', $1) ON CONFLICT (key) DO NOTHING";
export const SELECT_ID = "SELECT value FROM stream_store WHERE key = 'id'";

/** Makes sure a stream has its row (offset 0) before it is locked and moved on. */
export const ENSURE_STREAM = "INSERT INTO streams (stream, next_offset, call, attempt, updated_at) VALUES ($1, 0, '', 0, $2) ON CONFLICT (stream) DO NOTHING";
export const SELECT_STREAM = 'SELECT next_offset, call, attempt FROM streams WHERE stream = $1';
export const ADVANCE_STREAM = 'UPDATE streams SET next_offset = $2, call = $3, attempt = $4, updated_at = $5 WHERE stream = $1';

/** The statements one append runs after reading its stream's row, or why it writes nothing. */
export type AppendPlan =
  | { kind: 'stale'; attempt: number }
  | { kind: 'appended'; first: number; next: number; statements: Array<{ text: string; params: unknown[] }> };

/**
 * What appending `batch` to `stream` does, given the stream's row as the transaction read it: the
 * one rule of both backends. A batch of an attempt older than the newest one the store saw for its
 * call is stale; otherwise its entries are inserted from the row's next offset (one multi-row
 * insert per {@link INSERT_ROWS}) and the row moves on to the batch's call and attempt.
 */
export function planAppend(stream: string, row: { next_offset: unknown; call: string; attempt: number }, batch: { call: string; attempt: number; events: readonly unknown[] }, now: number): AppendPlan {
  if (row.call === batch.call && batch.attempt < row.attempt) return { kind: 'stale', attempt: row.attempt };
  const first = Number(row.next_offset);
  const bodies = batch.events.map((event) => JSON.stringify(event));
  const statements: Array<{ text: string; params: unknown[] }> = [];
  for (let at = 0; at < bodies.length; at += INSERT_ROWS) {
    const slice = bodies.slice(at, at + INSERT_ROWS);
    statements.push({ text: insertChunks(slice.length), params: slice.flatMap((body, k) => [stream, first + at + k, batch.attempt, body, now]) });
  }
  const next = first + bodies.length;
  statements.push({ text: ADVANCE_STREAM, params: [stream, next, batch.call, batch.attempt, now] });
  return { kind: 'appended', first, next, statements };
}

/** One multi-row insert of `rows` entries: `(stream, chunk_offset, attempt, body, written_at)` each. */
export function insertChunks(rows: number): string {
  const values = Array.from({ length: rows }, (_, k) => `($${k * 5 + 1}, $${k * 5 + 2}, $${k * 5 + 3}, $${k * 5 + 4}, $${k * 5 + 5})`);
  return `INSERT INTO stream_chunks (stream, chunk_offset, attempt, body, written_at) VALUES ${values.join(', ')}`;
}

export const SELECT_CHUNKS = 'SELECT chunk_offset, body FROM stream_chunks WHERE stream = $1 AND chunk_offset >= $2 ORDER BY chunk_offset LIMIT $3';
export const SELECT_RANGE =
  'SELECT (SELECT next_offset FROM streams WHERE stream = $1) AS next_offset, (SELECT MIN(chunk_offset) FROM stream_chunks WHERE stream = $1) AS first_offset';
export const SELECT_NEXT = 'SELECT next_offset FROM streams WHERE stream = $1';
export const SWEEP = 'DELETE FROM stream_chunks WHERE written_at < $1';
/** The sweep of one stream. */
export const SWEEP_STREAM = 'DELETE FROM stream_chunks WHERE written_at < $1 AND stream = $2';

/** Most entries one read answers; a reader reads again for more. */
export const READ_LIMIT = 500;

/** Most entries one insert carries (5 parameters each: far below either database's parameter limit). */
export const INSERT_ROWS = 200;

/** The range a stream's row and first chunk give: no row is a stream never written; no chunk, one whose entries are all swept. */
export function rangeOf(next: unknown, first: unknown): { first: number; next: number } {
  const end = next === null || next === undefined ? 0 : Number(next);
  return { first: first === null || first === undefined ? end : Number(first), next: end };
}
