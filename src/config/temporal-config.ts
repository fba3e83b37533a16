import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';

/** Where sessions live: the Temporal cluster, namespace and task queue. */
export interface TemporalConfig {
  /** `host:port` of the Temporal frontend. */
  address: string;
  namespace: string;
  /** The task queue the session workers poll. */
  taskQueue: string;
  /** TLS settings; `true` for TLS with the system's trust store (Temporal Cloud with an API key). */
  tls?: TLSConfig | boolean;
  /** Temporal Cloud API key, sent as a bearer token. */
  apiKey?: string;
}

/** Defaults of the connection settings, also shown by `--help`. */
export const TEMPORAL_DEFAULTS = Object.freeze({
  address: '127.0.0.1:7233',
  namespace: 'default',
  taskQueue: 'agent-sessions',
});

/**
 * Reads the connection settings from the environment:
 * `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `AGENT_SESSIONS_TASK_QUEUE`, and for TLS or Temporal
 * Cloud `TEMPORAL_API_KEY`, `TEMPORAL_TLS` (`true`), `TEMPORAL_TLS_CERT` and `TEMPORAL_TLS_KEY`
 * (mTLS client pair, file paths), `TEMPORAL_TLS_CA` (server root CA, file path) and
 * `TEMPORAL_TLS_SERVER_NAME`.
 *
 * @throws Error naming the variable when a TLS file cannot be read or only half a pair is set.
 */
export function temporalConfigFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  const config: TemporalConfig = {
    address: nonEmpty(env.TEMPORAL_ADDRESS) ?? TEMPORAL_DEFAULTS.address,
    namespace: nonEmpty(env.TEMPORAL_NAMESPACE) ?? TEMPORAL_DEFAULTS.namespace,
    taskQueue: nonEmpty(env.AGENT_SESSIONS_TASK_QUEUE) ?? TEMPORAL_DEFAULTS.taskQueue,
  };
  const apiKey = nonEmpty(env.TEMPORAL_API_KEY);
  if (apiKey !== undefined) config.apiKey = apiKey;

  const cert = nonEmpty(env.TEMPORAL_TLS_CERT);
  const key = nonEmpty(env.TEMPORAL_TLS_KEY);
  const ca = nonEmpty(env.TEMPORAL_TLS_CA);
  const serverName = nonEmpty(env.TEMPORAL_TLS_SERVER_NAME);
  if ((cert === undefined) !== (key === undefined)) {
    throw new Error('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together (the mTLS client certificate and its key)');
  }
  if (cert !== undefined || ca !== undefined || serverName !== undefined) {
    const tls: TLSConfig = {};
    if (cert !== undefined && key !== undefined) {
      tls.clientCertPair = { crt: readSetting('TEMPORAL_TLS_CERT', cert), key: readSetting('TEMPORAL_TLS_KEY', key) };
    }
    if (ca !== undefined) tls.serverRootCACertificate = readSetting('TEMPORAL_TLS_CA', ca);
    if (serverName !== undefined) tls.serverNameOverride = serverName;
    config.tls = tls;
  } else if (env.TEMPORAL_TLS === 'true' || (apiKey !== undefined && env.TEMPORAL_TLS !== 'false')) {
    // An API key is only ever accepted over TLS, so it implies TLS unless explicitly turned off.
    config.tls = true;
  }
  return config;
}

/**
 * The environment's settings with explicit ones laid over them; an explicit `undefined` keeps
 * the environment's value.
 */
export function resolveTemporalConfig(overrides: Partial<TemporalConfig> = {}, env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  const given = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined));
  return { ...temporalConfigFromEnv(env), ...given };
}

/** The part of a {@link TemporalConfig} that both `Connection` and `NativeConnection` take. */
export function connectionOptions(config: TemporalConfig): { address: string; tls?: TLSConfig | boolean; apiKey?: string } {
  return {
    address: config.address,
    ...(config.tls !== undefined ? { tls: config.tls } : {}),
    ...(config.apiKey !== undefined ? { apiKey: config.apiKey } : {}),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function readSetting(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`${variable}=${path} cannot be read: ${(error as Error).message}`);
  }
}
