import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import { InvalidSettingError } from '../client/errors';
import { booleanSetting, nonEmpty } from './setting-values';

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

/** Defaults of the connection settings, also shown by `--help`: what the library uses for anything not given. */
export const TEMPORAL_DEFAULTS = Object.freeze({
  address: '127.0.0.1:7233',
  namespace: 'default',
  taskQueue: 'agent-sessions',
});

/**
 * Reads the connection settings from `env` (the settings loader's part; the library never calls
 * it): `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `AGENT_SESSIONS_TASK_QUEUE`, and for TLS or
 * Temporal Cloud `TEMPORAL_API_KEY`, `TEMPORAL_TLS` (`true` or `false`), `TEMPORAL_TLS_CERT` and
 * `TEMPORAL_TLS_KEY` (mTLS client pair, file paths), `TEMPORAL_TLS_CA` (server root CA, file
 * path) and `TEMPORAL_TLS_SERVER_NAME`.
 *
 * @throws InvalidSettingError naming the variable: an address that is not `host[:port]`,
 *   `TEMPORAL_TLS` other than true or false, a TLS file that cannot be read, half a client pair.
 */
export function temporalConfigFromEnv(env: NodeJS.ProcessEnv): TemporalConfig {
  const config: TemporalConfig = {
    address: temporalAddress(env.TEMPORAL_ADDRESS) ?? TEMPORAL_DEFAULTS.address,
    namespace: nonEmpty(env.TEMPORAL_NAMESPACE) ?? TEMPORAL_DEFAULTS.namespace,
    taskQueue: nonEmpty(env.AGENT_SESSIONS_TASK_QUEUE) ?? TEMPORAL_DEFAULTS.taskQueue,
  };
  const apiKey = nonEmpty(env.TEMPORAL_API_KEY);
  if (apiKey !== undefined) config.apiKey = apiKey;
  const tlsWanted = booleanSetting('TEMPORAL_TLS', env.TEMPORAL_TLS);

  const cert = nonEmpty(env.TEMPORAL_TLS_CERT);
  const key = nonEmpty(env.TEMPORAL_TLS_KEY);
  const ca = nonEmpty(env.TEMPORAL_TLS_CA);
  const serverName = nonEmpty(env.TEMPORAL_TLS_SERVER_NAME);
  if ((cert === undefined) !== (key === undefined)) {
    throw new InvalidSettingError('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together (the mTLS client certificate and its key)');
  }
  if (cert !== undefined || ca !== undefined || serverName !== undefined) {
    const tls: TLSConfig = {};
    if (cert !== undefined && key !== undefined) {
      tls.clientCertPair = { crt: readSetting('TEMPORAL_TLS_CERT', cert), key: readSetting('TEMPORAL_TLS_KEY', key) };
    }
    if (ca !== undefined) tls.serverRootCACertificate = readSetting('TEMPORAL_TLS_CA', ca);
    if (serverName !== undefined) tls.serverNameOverride = serverName;
    config.tls = tls;
  } else if (tlsWanted === true || (apiKey !== undefined && tlsWanted !== false)) {
    // An API key is only ever accepted over TLS, so it implies TLS unless explicitly turned off.
    config.tls = true;
  }
  return config;
}

/**
 * The given settings laid over {@link TEMPORAL_DEFAULTS}; an explicit `undefined` keeps the
 * default. Reads no environment: a program that wants the environment's settings loads them
 * with `loadSettings(process.env)` and passes `settings.temporal`.
 */
export function resolveTemporalConfig(given: Partial<TemporalConfig> = {}): TemporalConfig {
  const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  return { ...TEMPORAL_DEFAULTS, ...defined };
}

/** The part of a {@link TemporalConfig} that both `Connection` and `NativeConnection` take. */
export function connectionOptions(config: TemporalConfig): { address: string; tls?: TLSConfig | boolean; apiKey?: string } {
  return {
    address: config.address,
    ...(config.tls !== undefined ? { tls: config.tls } : {}),
    ...(config.apiKey !== undefined ? { apiKey: config.apiKey } : {}),
  };
}

/**
 * What Temporal's own address parser accepts, `host` or `host:port` (IPv6 in brackets), with
 * the port in range: a scheme (`http://…`), a path or a space is refused here, by the
 * variable's name, instead of by the SDK on the first call.
 */
const ADDRESS = /^(?:\[[0-9a-fA-F.:]+\]|[^\s:/[\]]+)(?::(\d{1,5}))?$/;

function temporalAddress(raw: string | undefined): string | undefined {
  const address = nonEmpty(raw);
  if (address === undefined) return undefined;
  const match = ADDRESS.exec(address);
  const port = match?.[1] !== undefined ? Number(match[1]) : undefined;
  if (match === null || (port !== undefined && (port < 1 || port > 65535))) {
    throw new InvalidSettingError(
      `TEMPORAL_ADDRESS must be host:port with a port from 1 to 65535 (no scheme), e.g. 127.0.0.1:7233 or <namespace>.<account>.tmprl.cloud:7233, got ${JSON.stringify(raw)}`,
    );
  }
  return address;
}

function readSetting(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new InvalidSettingError(`${variable}=${path} cannot be read: ${(error as Error).message}`);
  }
}
