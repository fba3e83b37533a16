// Lint rules that protect what the type checker cannot: determinism of workflow code (no Node
// built-ins or outside modules in workflows/), no import cycles, type-only imports, and no
// floating promises.
import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

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
    files: ['workflows/**/*.ts', 'src/todo/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'Workflow and domain code must stay deterministic: no Node built-ins.' },
            {
              group: ['fs', 'path', 'os', 'crypto', 'child_process', 'http', 'https', 'net', 'process', 'timers', 'worker_threads'],
              message: 'Workflow and domain code must stay deterministic: no Node built-ins.',
            },
            { group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'], message: 'Workflow code imports only @temporalio/workflow.' },
            { group: ['../src/client*', '../src/worker*', '../src/devserver*', '../src/cli*', '../src/history*', '../src/config*'], message: 'workflows/ imports only src/todo.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/todo/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@temporalio/*'], message: 'src/todo is pure domain code: no Temporal imports.' }, { group: ['node:*'], message: 'src/todo is pure: no Node built-ins.' }] },
      ],
    },
  },
);
