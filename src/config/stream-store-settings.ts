import { join, resolve } from 'node:path';
import { InvalidSettingError } from '../client/errors';
import { integerSetting, nonEmpty } from './setting-values';

/** Where the model's streamed words are kept (docs/streaming.md), and for how long. */
export interface StreamStoreConfig {
  /** `AGENT_SESSIONS_STREAM_STORE`: a `postgres://` URL, or a SQLite file's absolute path (default `<data folder>/streams.sqlite`). */
  location: string;
  /** `AGENT_SESSIONS_STREAM_POOL`: connections of a PostgreSQL store's pool per process. */
  poolSize: number;
  /** `AGENT_SESSIONS_STREAM_RETENTION_MINUTES`: how long the worker keeps words before its sweep drops them. */
  retentionMinutes: number;
}

/** Defaults of the stream store settings. */
export const STREAM_STORE_DEFAULTS = Object.freeze({ file: 'streams.sqlite', poolSize: 10, retentionMinutes: 60 });

/**
 * Reads the stream store settings from `env`; a relative SQLite path is taken from `cwd`.
 *
 * @throws InvalidSettingError naming the variable: a URL of another scheme than postgres, a pool
 *   size or retention out of range.
 */
export function streamStoreSettingsFromEnv(env: NodeJS.ProcessEnv, dataDir: string, cwd: string = process.cwd()): StreamStoreConfig {
  const given = nonEmpty(env.AGENT_SESSIONS_STREAM_STORE);
  if (given !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(given) && !/^postgres(ql)?:\/\//i.test(given)) {
    throw new InvalidSettingError(
      `AGENT_SESSIONS_STREAM_STORE must be a postgres:// URL or the path of a SQLite file, got a ${given.split(':')[0]}: URL`,
    );
  }
  const location = given === undefined ? join(dataDir, STREAM_STORE_DEFAULTS.file) : /^postgres(ql)?:\/\//i.test(given) ? given : resolve(cwd, given);
  return {
    location,
    poolSize: integerSetting('AGENT_SESSIONS_STREAM_POOL', env.AGENT_SESSIONS_STREAM_POOL, { min: 1, max: 1000 }, 'connections') ?? STREAM_STORE_DEFAULTS.poolSize,
    retentionMinutes:
      integerSetting('AGENT_SESSIONS_STREAM_RETENTION_MINUTES', env.AGENT_SESSIONS_STREAM_RETENTION_MINUTES, { min: 1, max: 525_600 }, 'minutes') ??
      STREAM_STORE_DEFAULTS.retentionMinutes,
  };
}
