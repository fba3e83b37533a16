import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The scripts shipped in the package's `models/` folder, by name (the file is `models/<name>.json`). */
export const BUNDLED_SCRIPTS = ['lint-fix', 'rejected-write', 'subagents', 'nudge', 'approval', 'edit-file'] as const;

/** One of {@link BUNDLED_SCRIPTS}. */
export type BundledScript = (typeof BUNDLED_SCRIPTS)[number];

/** True when `name` names a bundled script (`lint-fix`), not a file. */
export function isBundledScript(name: string): name is BundledScript {
  return (BUNDLED_SCRIPTS as readonly string[]).includes(name);
}

/**
 * The path of a bundled script, from the sources (`src/model-server/`) or the build
 * (`dist/src/model-server/`) alike.
 *
 * @example bundledScriptFile('lint-fix') // '/…/agent-sessions/models/lint-fix.json'
 */
export function bundledScriptFile(name: BundledScript): string {
  const candidates = [join(__dirname, '..', '..', 'models'), join(__dirname, '..', '..', '..', 'models')];
  const folder = candidates.find((dir) => existsSync(join(dir, `${name}.json`))) ?? (candidates[0] as string);
  return join(folder, `${name}.json`);
}
