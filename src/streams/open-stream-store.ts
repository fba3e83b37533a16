import { PostgresStreamStore } from './postgres-stream-store';
import { SqliteStreamStore } from './sqlite-stream-store';
import type { StreamStore } from './stream-store';

/** Where the stream store is and how it is reached: what `AGENT_SESSIONS_STREAM_STORE` and `AGENT_SESSIONS_STREAM_POOL` say. */
export interface StreamStoreSettings {
  /** A `postgres://` (or `postgresql://`) URL, or the path of a SQLite file. */
  location: string;
  /** Connections of a PostgreSQL store's pool (default 10). */
  poolSize?: number;
}

/** Whether `location` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresLocation(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * Opens the stream store `settings.location` names: PostgreSQL for a `postgres://` URL, else a
 * SQLite file at that path (created with its folder when missing).
 *
 * @throws StreamStoreError when a SQLite file cannot be opened (a PostgreSQL store says so on first use).
 * @example
 * const store = openStreamStore({ location: 'data/streams.sqlite' });
 */
export function openStreamStore(settings: StreamStoreSettings): StreamStore {
  return isPostgresLocation(settings.location)
    ? new PostgresStreamStore(settings.location, settings.poolSize !== undefined ? { poolSize: settings.poolSize } : {})
    : new SqliteStreamStore(settings.location);
}
