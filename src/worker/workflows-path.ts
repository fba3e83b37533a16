import { existsSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';

/**
 * The workflow entry point of this package, compiled (`dist/`) or TypeScript (run with `tsx`).
 *
 * @throws Error when neither exists (the checkout has not been built).
 */
export function workflowsPath(): string {
  return workflowFile('index');
}

/**
 * The fork capture's workflow interceptor module (`workflows/fork-capture`), compiled or
 * TypeScript, which only the bundle a fork replays with includes.
 *
 * @throws Error when neither exists (the checkout has not been built).
 */
export function forkCapturePath(): string {
  return workflowFile('fork-capture');
}

function workflowFile(name: string): string {
  const dir = join(__dirname, '..', '..', 'workflows');
  for (const file of [`${name}.js`, `${name}.ts`]) {
    if (existsSync(join(dir, file))) return join(dir, file);
  }
  throw new Error(`workflow code not found in ${dir}; run \`npm run build\``);
}

/**
 * The workflow interceptor module every session bundle carries (`workflows/tracing-interceptors`),
 * compiled or TypeScript, beside {@link workflowsPath}.
 */
export function tracingInterceptorsPath(): string {
  const entry = workflowsPath();
  return join(dirname(entry), `tracing-interceptors${extname(entry)}`);
}

/**
 * The workflow modules a worker evaluates once and shares between all its sessions (the SDK's
 * `preloadModules`), instead of once per new session: the session's wire contract
 * (`workflows/messages`) and the pure domain it folds with (`src/session/workflow-api` and what it
 * imports). Both hold no state of their own (module-level constants and functions only; see
 * test/unit/workflow-bundle.test.ts), which is what makes sharing them safe.
 */
export function preloadedModulePaths(): string[] {
  const entry = workflowsPath();
  const ext = extname(entry);
  return [join(dirname(entry), `messages${ext}`), join(dirname(entry), '..', 'src', 'session', `workflow-api${ext}`)];
}
