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
