export {
  StreamStoreError,
  type AppendResult,
  type StoredEntry,
  type StreamBatch,
  type StreamRange,
  type StreamStore,
  type StreamStoreIdentity,
  type StreamStoreStats,
} from './stream-store';
export { isPostgresLocation, openStreamStore, type StreamStoreSettings } from './open-stream-store';
export { PostgresStreamStore, withoutPassword, type PostgresStreamStoreOptions } from './postgres-stream-store';
export { SqliteStreamStore, type SqliteStreamStoreOptions } from './sqlite-stream-store';
export { advertiseStreamStore, advertisedStreamStore, assertSameStreamStore, STREAM_STORE_METADATA_KEY } from './store-advertisement';
