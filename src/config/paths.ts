import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { nonEmpty } from './setting-values';

/** Where local files go: the per-user cache, the project's data folder, an explicit `temporal` binary. */
export interface PathSettings {
  /** The per-user cache (built binaries, workflow bundles): see {@link resolveCacheDir}. */
  cacheDir: string;
  /** Local state (the dev server's SQLite file, the cluster): see {@link defaultDataDir}. */
  dataDir: string;
  /** `TEMPORAL_CLI_PATH`, as given: the `temporal` binary to use instead of looking for one. */
  temporalCliPath?: string;
}

/**
 * The per-user cache folder shared by every clone on the machine (built binaries, workflow
 * bundles): `AGENT_SESSIONS_CACHE_DIR`, else `$XDG_CACHE_HOME/agent-sessions`, else
 * `~/.cache/agent-sessions`. A relative `XDG_CACHE_HOME` is ignored, as the XDG spec says.
 * This is the one place the rule is written; everything else is given the folder.
 */
export function resolveCacheDir(env: NodeJS.ProcessEnv): string {
  const explicit = nonEmpty(env['AGENT_SESSIONS_CACHE_DIR']);
  if (explicit !== undefined) return resolve(explicit);
  const xdg = nonEmpty(env['XDG_CACHE_HOME']);
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'agent-sessions');
  return userCacheDir();
}

/**
 * `~/.cache/agent-sessions`, from the home folder alone: the cache a library call uses when it
 * is given none (libraries read no environment variables).
 */
export function userCacheDir(): string {
  return join(homedir(), '.cache', 'agent-sessions');
}

/** The folder for local state (the dev server's SQLite file, the cluster): `AGENT_SESSIONS_DATA_DIR`, else `<cwd>/data`. */
export function defaultDataDir(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): string {
  const explicit = nonEmpty(env['AGENT_SESSIONS_DATA_DIR']);
  return explicit !== undefined ? resolve(cwd, explicit) : join(cwd, 'data');
}

/** The path settings of `env` (no file is touched: the folders are created when first used). */
export function pathSettingsFromEnv(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): PathSettings {
  const temporalCliPath = nonEmpty(env['TEMPORAL_CLI_PATH']);
  return {
    cacheDir: resolveCacheDir(env),
    dataDir: defaultDataDir(env, cwd),
    ...(temporalCliPath !== undefined ? { temporalCliPath } : {}),
  };
}
