import type { SessionClientOptions } from '../client';
import { loadSettings, type Settings, type SettingsFlags, type TemporalConfig } from '../config';

/**
 * The settings of one command: the environment read once, with the command's flags over it.
 * The only place the CLI reads `process.env`; everything it starts is given what it needs.
 *
 * @throws InvalidSettingError (exit code 2) naming the variable or flag with a bad value.
 */
export function commandSettings(flags: Partial<SettingsFlags> = {}): Settings {
  return loadSettings(process.env, flags);
}

/** The connection settings alone, as the library's options take them. */
export function temporalOptions(settings: Settings): TemporalConfig {
  const { address, namespace, taskQueue, tls, apiKey } = settings.temporal;
  return { address, namespace, taskQueue, ...(tls !== undefined ? { tls } : {}), ...(apiKey !== undefined ? { apiKey } : {}) };
}

/** What a client of these settings is made with: the connection, and the continue-as-new limit of the sessions it creates. */
export function clientOptions(settings: Settings, temporal: TemporalConfig = temporalOptions(settings)): TemporalConfig & SessionClientOptions {
  return { ...temporal, ...(settings.continueAsNewAfter !== undefined ? { continueAsNewAfter: settings.continueAsNewAfter } : {}) };
}
