// Lint rules that protect what the type checker cannot: the layers of the code (what each folder
// may import, so workflow code stays deterministic and clients never load the worker), no import
// cycles, type-only imports, and no floating promises.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** A regex source matching the module `path` itself or any file below it, e.g. `../todo` and `../todo/fold`. */
function moduleAt(path) {
  return `${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:/|$)`;
}

/** Every Node built-in, bare (`fs`, `fs/promises`) or with the `node:` scheme (`node:test` exists only so). */
const NODE_BUILTIN = `node:|${builtinModules
  .filter((name) => !name.startsWith('node:') && !name.includes('/'))
  .map(moduleAt)
  .join('|')}`;
const TEMPORAL_PACKAGE = moduleAt('@temporalio');
const RELATIVE = moduleAt('.') + '|' + moduleAt('..');
/** Matches what no earlier pattern did: the last reason of a layer that lists what it allows. */
const ANYTHING_ELSE = '';

/**
 * The complete `no-restricted-imports` entry of one layer. Each folder gets exactly one entry, so
 * no later block replaces an earlier one's options (flat config overrides a rule's options, it
 * never merges them).
 *
 * `refused` is a list of reasons, tried in order; an import gets the first reason whose pattern
 * matches and no other, so one bad import is one report. `allowed` imports match no reason;
 * `typesOnly` imports are refused unless the whole declaration is `import type`/`export type`.
 * Patterns are regex sources matched from the start of the import path, case-sensitively (import
 * paths are).
 *
 * The rule reads `import` and `export … from` declarations: a `require()` is caught by
 * `@typescript-eslint/no-require-imports` instead, and every one in the code carries a disable
 * comment that says why.
 */
function layerImports({ allowed = [], typesOnly = [], refused }) {
  const taken = [...allowed];
  const pattern = (regex, message, extra = {}) => {
    const unless = taken.length > 0 ? `(?!${taken.join('|')})` : '';
    taken.push(regex);
    return { regex: `^${unless}(?:${regex})`, caseSensitive: true, message, ...extra };
  };
  const patterns = [
    ...typesOnly.map(({ regex, message }) => pattern(regex, message, { allowTypeImports: true })),
    ...refused.map(({ regex, message }) => pattern(regex, message)),
  ];
  return ['error', { patterns }];
}

/** src/todo and src/session: pure, safe inside the workflow sandbox and everywhere else. */
function domainImports(folder, { allowed, alsoMayImport }) {
  return layerImports({
    allowed: [moduleAt('.'), moduleAt('zod'), ...allowed],
    refused: [
      { regex: NODE_BUILTIN, message: `${folder} is pure domain code that workflows run: no Node built-ins.` },
      { regex: TEMPORAL_PACKAGE, message: `${folder} is pure domain code: no Temporal packages (workflows/ connects it to Temporal).` },
      { regex: RELATIVE, message: `${folder} is pure domain code: it imports only its own files${alsoMayImport}, none of the service.` },
      { regex: ANYTHING_ELSE, message: `${folder} is pure domain code: no npm package besides zod.` },
    ],
  });
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test-output/', 'bench/results/', 'bin/', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.js'] } } },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's test() and describe() return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: 'package', name: ['test', 'describe', 'it', 'suite'], package: 'node:test' }] },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
    },
  },
  {
    // Tests read JSON answers whose shape is the thing under test.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The workflow bundle runs in Temporal's sandbox and is replayed: it may import only what is
    // deterministic there. test/unit/lint-layers.test.ts holds these rules to their word.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': layerImports({
        // @temporalio/common is what @temporalio/workflow is built on, and it holds error classes the
        // workflow package does not re-export (WorkflowExecutionAlreadyStartedError).
        allowed: [
          moduleAt('@temporalio/workflow'),
          moduleAt('@temporalio/common'),
          moduleAt('.'),
          moduleAt('../src/todo'),
          moduleAt('../src/session'),
        ],
        typesOnly: [
          {
            regex: moduleAt('../activities'),
            message: 'Workflow code imports activities as types only (`import type * as activities`): the worker runs them.',
          },
          {
            // tracing-interceptors.ts alone requires them (with a disable comment saying why).
            regex: moduleAt('@temporalio/interceptors-opentelemetry'),
            message: "Temporal's OpenTelemetry interceptors are imported as types only: tracing-interceptors.ts requires them on a worker that traces.",
          },
        ],
        refused: [
          { regex: NODE_BUILTIN, message: 'Workflow code is replayed and must stay deterministic: no Node built-ins.' },
          { regex: TEMPORAL_PACKAGE, message: "Workflow code runs in Temporal's sandbox: of Temporal's packages it imports only @temporalio/workflow and @temporalio/common." },
          { regex: RELATIVE, message: 'workflows/ imports only its own files, src/todo and src/session (the workflow-safe domain).' },
          { regex: ANYTHING_ELSE, message: "workflows/ is bundled into Temporal's sandbox: no npm package besides @temporalio/workflow and @temporalio/common." },
        ],
      }),
    },
  },
  {
    files: ['src/todo/**/*.ts'],
    rules: { 'no-restricted-imports': domainImports('src/todo', { allowed: [], alsoMayImport: '' }) },
  },
  {
    files: ['src/session/**/*.ts'],
    rules: { 'no-restricted-imports': domainImports('src/session', { allowed: [moduleAt('../todo')], alsoMayImport: ' and src/todo' }) },
  },
  {
    // The CLI, the HTTP service and library users load the client without the worker's native
    // core; replay and the dev server are reached through their own entry points. The metrics
    // are the HTTP service's as much as the worker's, so they load no worker code either; the MCP
    // server runs in the CLI (`mcp`) and the HTTP service.
    files: ['src/client/**/*.ts', 'src/http/**/*.ts', 'src/metrics/**/*.ts', 'src/mcp/**/*.ts'],
    rules: {
      'no-restricted-imports': layerImports({
        refused: [
          {
            regex: `${moduleAt('@temporalio/worker')}|${moduleAt('@temporalio/activity')}|${moduleAt('@temporalio/testing')}`,
            message: 'Clients never load worker-side Temporal packages.',
          },
          { regex: moduleAt('../worker'), message: 'Clients never load src/worker, not even its types: move what a client needs out of it.' },
          { regex: moduleAt('../../activities'), message: 'Clients never load activities: the worker runs them.' },
          { regex: moduleAt('../devserver'), message: 'Clients do not start processes: src/devserver belongs to the CLI.' },
        ],
      }),
    },
  },
);
