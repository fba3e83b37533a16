import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * The per-user cache folder shared by every clone on the machine (built binaries, workflow
 * bundles): `AGENT_SESSIONS_CACHE_DIR`, else `$XDG_CACHE_HOME/agent-sessions`, else
 * `~/.cache/agent-sessions`. A relative `XDG_CACHE_HOME` is ignored, as the XDG spec says.
 */
export function resolveCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['AGENT_SESSIONS_CACHE_DIR'];
  if (explicit) return resolve(explicit);
  const xdg = env['XDG_CACHE_HOME'];
  if (xdg && isAbsolute(xdg)) return join(xdg, 'agent-sessions');
  return join(homedir(), '.cache', 'agent-sessions');
}

/** The folder for local state (the dev server's SQLite file, the cluster): `AGENT_SESSIONS_DATA_DIR`, else `<cwd>/data`. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const explicit = env['AGENT_SESSIONS_DATA_DIR'];
  return explicit ? resolve(cwd, explicit) : join(cwd, 'data');
}
