import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The workflow entry point of this package, compiled (`dist/`) or TypeScript (run with `tsx`).
 *
 * @throws Error when neither exists (the checkout has not been built).
 */
export function workflowsPath(): string {
  const dir = join(__dirname, '..', '..', 'workflows');
  for (const file of ['index.js', 'index.ts']) {
    if (existsSync(join(dir, file))) return join(dir, file);
  }
  throw new Error(`workflow code not found in ${dir}; run \`npm run build\``);
}
