import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

/**
 * This package's version, from its package.json (found upwards from this file, which sits two
 * folders down in the sources and three in `dist/`), read once.
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  for (let dir = __dirname; dirname(dir) !== dir; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'agent-sessions' && typeof pkg.version === 'string') return (cached = pkg.version);
    } catch {
      // Not here: one folder up.
    }
  }
  return (cached = '0.0.0');
}
