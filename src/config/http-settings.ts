import { InvalidSettingError } from '../client/errors';
import { listSetting, nonEmpty } from './setting-values';

/**
 * The HTTP service's settings. The token's characters and the allowed hosts' form are checked
 * by the service itself when it starts (`startHttpServer`), with messages naming these variables.
 */
export interface HttpSettings {
  /** The address to bind (`--host`). */
  host: string;
  /** The port to listen on (`--port` of serve, `--http-port` of up and cluster). */
  port: number;
  /** `AGENT_SESSIONS_TOKEN`: the bearer token every endpoint but `/healthz` and the dashboard's files requires. */
  token?: string;
  /** `AGENT_SESSIONS_CORS_ORIGINS`: origins allowed by CORS (none: no CORS headers). */
  corsOrigins: string[];
  /** `AGENT_SESSIONS_ALLOWED_HOSTS`: `Host` names answered beside the bound address (`host` or `host:port`). */
  allowedHosts: string[];
}

/** Where the HTTP service listens unless told otherwise: loopback only. */
export const HTTP_DEFAULTS = Object.freeze({ host: '127.0.0.1', port: 8080 });

/**
 * Reads the HTTP settings from `env`, with the host and port of the command's flags.
 *
 * @throws InvalidSettingError when the port is not an integer from 1 to 65535 or the host is empty.
 */
export function httpSettingsFromEnv(env: NodeJS.ProcessEnv, flags: { host?: string; port?: number } = {}): HttpSettings {
  const port = flags.port ?? HTTP_DEFAULTS.port;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InvalidSettingError(`the HTTP port must be an integer from 1 to 65535, got ${JSON.stringify(port)}`);
  }
  const host = flags.host !== undefined ? nonEmpty(flags.host) : HTTP_DEFAULTS.host;
  if (host === undefined) throw new InvalidSettingError('--host must name an address to bind, e.g. 127.0.0.1 or 0.0.0.0, got ""');
  const token = nonEmpty(env.AGENT_SESSIONS_TOKEN);
  return {
    host,
    port,
    ...(token !== undefined ? { token } : {}),
    corsOrigins: listSetting(env.AGENT_SESSIONS_CORS_ORIGINS),
    allowedHosts: listSetting(env.AGENT_SESSIONS_ALLOWED_HOSTS),
  };
}
