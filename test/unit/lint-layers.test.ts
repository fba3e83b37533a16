import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';

// The layer rules are only worth something if the real config enforces them, so every probe
// is linted with eslint.config.mjs itself, under a path inside the real folder: the config's
// own `files` globs decide which rules apply. lintText reads the code from memory, so nothing
// is written to the checkout. The one override drops type-aware linting: a probe is not part
// of the TypeScript project (the project service refuses files outside it), and the rule under
// test reads import declarations, not types.
const ROOT = join(__dirname, '..', '..');
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfigFile: join(ROOT, 'eslint.config.mjs'),
  overrideConfig: tseslint.configs.disableTypeChecked as Linter.Config,
});

const PROBE = '__lint_probe__.ts';

/** Lints `code` as if it were a file named PROBE in `dir`, and fails on a parsing error. */
async function lintProbe(dir: string, code: string): Promise<Linter.LintMessage[]> {
  const filePath = join(ROOT, dir, PROBE);
  assert.equal(await eslint.isPathIgnored(filePath), false, `${dir}/${PROBE} is ignored by the config`);
  const [result] = await eslint.lintText(code, { filePath });
  assert.ok(result, `no lint result for ${dir}/${PROBE}`);
  const fatal = result.messages.filter((message) => message.fatal);
  assert.deepEqual(fatal, [], `${dir}/${PROBE} did not parse`);
  return result.messages;
}

function valueImport(source: string): string {
  return `import * as probe from '${source}';\nexport { probe };\n`;
}

function typeImport(source: string): string {
  return `import type * as probe from '${source}';\nexport type Probe = typeof probe;\n`;
}

/** The `no-restricted-imports` reports among `messages`, as their messages. */
function restricted(messages: Linter.LintMessage[]): string[] {
  return messages.filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message);
}

async function assertRefused(dir: string, code: string, source: string): Promise<void> {
  const reports = restricted(await lintProbe(dir, code));
  // Exactly one: a refused import gets one reason, not one per pattern that happens to match.
  assert.equal(reports.length, 1, `${dir}/ importing '${source}': expected one no-restricted-imports report, got ${JSON.stringify(reports)}`);
  assert.ok(reports[0]?.includes(`'${source}'`), `the report names the import: ${reports[0]}`);
}

async function assertAllowed(dir: string, code: string, source: string): Promise<void> {
  const reports = restricted(await lintProbe(dir, code));
  assert.deepEqual(reports, [], `${dir}/ importing '${source}' should be allowed`);
}

/** Registers one test per refused import and one per allowed import of `dir`. */
function layer(dir: string, rules: { refused: string[]; allowed: string[] }): void {
  describe(`${dir}/`, () => {
    for (const source of rules.refused) {
      test(`${dir}/ may not import '${source}'`, () => assertRefused(dir, valueImport(source), source));
    }
    for (const source of rules.allowed) {
      test(`${dir}/ may import '${source}'`, () => assertAllowed(dir, valueImport(source), source));
    }
  });
}

layer('workflows', {
  refused: [
    'fs',
    'node:fs',
    '@temporalio/client',
    '@temporalio/worker',
    '@temporalio/activity',
    'hono',
    'zod',
    '../src/client',
    '../src/worker/replay',
    '../src/http/app',
    '../src/config/temporal-config',
    '../src',
    '../activities/model',
    '@temporalio/workflow-streams/workflow',
  ],
  allowed: ['@temporalio/workflow', '@temporalio/common', './messages', '../src/todo/workflow-api', '../src/todo', '../src/session/x'],
});

test('workflows/ may import activities as types only, with either form of import type', async () => {
  await assertAllowed('workflows', typeImport('../activities/model'), '../activities/model');
  await assertAllowed('workflows', `import type { Model } from '../activities/model';\nexport type Probe = Model;\n`, '../activities/model');
});

const DOMAIN_REFUSED = ['fs', 'node:crypto', '@temporalio/workflow', '../client', '../worker', 'hono', '../http', '../../workflows/messages', '../../activities/x'];

layer('src/todo', { refused: [...DOMAIN_REFUSED, '../session'], allowed: ['zod', './rules'] });

layer('src/session', { refused: DOMAIN_REFUSED, allowed: ['../todo', '../todo/fold', './events', 'zod'] });

const CLIENT_REFUSED = ['@temporalio/worker', '@temporalio/activity', '../worker/replay', '../worker', '../../activities/x', '../devserver'];
const CLIENT_ALLOWED = ['@temporalio/client', '../todo', '../../workflows/messages'];

layer('src/client', { refused: CLIENT_REFUSED, allowed: CLIENT_ALLOWED });

layer('src/http', { refused: CLIENT_REFUSED, allowed: [...CLIENT_ALLOWED, 'hono', '../client', '../metrics'] });

layer('src/metrics', { refused: CLIENT_REFUSED, allowed: ['prom-client', '../client/errors'] });

layer('src/mcp', { refused: CLIENT_REFUSED, allowed: [...CLIENT_ALLOWED, '@modelcontextprotocol/server', '../client', '../session'] });

test('clients may not import worker code even as types', async () => {
  await assertRefused('src/client', typeImport('../worker/replay'), '../worker/replay');
});

test('a re-export is refused like an import', async () => {
  await assertRefused('workflows', `export { readFileSync } from 'node:fs';\n`, 'node:fs');
  await assertRefused('src/todo', `export * from '../client';\n`, '../client');
});
