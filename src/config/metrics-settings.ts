import { InvalidSettingError } from '../client/errors';
import { integerSetting, nonEmpty } from './setting-values';

/** Where a worker serves its metrics (`temporal_*` and the agent loop's). */
export interface MetricsSettings {
  /**
   * `--metrics-port` / `AGENT_SESSIONS_METRICS_PORT`: the worker's metrics port, 0 for any free
   * one; absent, a worker serves none (`up` then picks a free one).
   */
  port?: number;
  /** `--metrics-host` / `AGENT_SESSIONS_METRICS_HOST`: the address to bind (default 127.0.0.1). */
  host: string;
}

/** The worker's metrics endpoint unless told otherwise: off, and on loopback once on. */
export const METRICS_DEFAULTS = Object.freeze({ host: '127.0.0.1' });

/**
 * Reads the metrics settings; a flag wins over its variable.
 *
 * @throws InvalidSettingError naming the flag or variable: a port that is not an integer from 0
 *   to 65535, or an empty host.
 */
export function metricsSettingsFromEnv(env: NodeJS.ProcessEnv, flags: { port?: string; host?: string } = {}): MetricsSettings {
  const [name, raw] = flags.port !== undefined ? ['--metrics-port', flags.port] : ['AGENT_SESSIONS_METRICS_PORT', env.AGENT_SESSIONS_METRICS_PORT];
  // An empty flag is a mistake, not "off": off is the flag left out.
  if (flags.port !== undefined && nonEmpty(flags.port) === undefined) {
    throw new InvalidSettingError(`--metrics-port must be an integer from 0 to 65535 (0: any free port), got ${JSON.stringify(flags.port)}`);
  }
  const port = integerSetting(name, raw, { min: 0, max: 65535 }, '0: any free port');
  const host = flags.host !== undefined ? nonEmpty(flags.host) : (nonEmpty(env.AGENT_SESSIONS_METRICS_HOST) ?? METRICS_DEFAULTS.host);
  if (host === undefined) throw new InvalidSettingError('--metrics-host must name an address to bind, e.g. 127.0.0.1 or 0.0.0.0, got ""');
  return { ...(port !== undefined ? { port } : {}), host };
}
