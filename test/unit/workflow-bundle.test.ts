import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { Worker } from '@temporalio/worker';
import { bundleCacheFile, bundleSessionWorkflows, forgetBundlesInMemory } from '../../src/worker/workflow-bundle';
import { ROOT } from '../helpers';

const POLICY = { allowParallelInProgress: false };

describe('the workflow bundle cache', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'agent-sessions-bundles-'));

  test('the bundle has the policy baked in and records every file webpack read, from every bundled folder and package', async () => {
    const { code } = await bundleSessionWorkflows(POLICY, { cacheDir });
    assert.ok(!code.includes('__AGENT_SESSIONS_ALLOW_PARALLEL_IN_PROGRESS__'), 'the constant was replaced');
    const entry = JSON.parse(readFileSync(bundleCacheFile(POLICY, cacheDir), 'utf8')) as { code: string; files: Array<[string, string]> };
    assert.equal(entry.code, code);
    const files = entry.files.map(([path]) => relative(ROOT, path));
    for (const expected of ['workflows/session.ts', 'workflows/messages.ts', 'src/todo/acceptance.ts', 'src/session/apply-event.ts']) {
      assert.ok(files.includes(expected), `${expected} is recorded`);
    }
    for (const pkg of ['node_modules/@temporalio/workflow/', 'node_modules/@temporalio/common/']) {
      assert.ok(files.some((file) => file.startsWith(pkg)), `files of ${pkg} are recorded`);
    }
    // The workflow checks shapes by hand: the schema library stays out of every session's bundle.
    assert.ok(!files.some((file) => file.startsWith('node_modules/zod/')), 'zod is not in the bundle');
    assert.ok(!files.includes('src/todo/schema.ts') && !files.includes('src/todo/index.ts'), 'nor the schema module or the index that loads it');
  });

  test('an unchanged cache is reused; a change in any recorded file rebuilds the bundle', async () => {
    const file = bundleCacheFile(POLICY, cacheDir);
    const written = statSync(file).mtimeMs;
    forgetBundlesInMemory();
    await bundleSessionWorkflows(POLICY, { cacheDir });
    assert.equal(statSync(file).mtimeMs, written, 'reused from disk');

    const entry = JSON.parse(readFileSync(file, 'utf8')) as { code: string; files: Array<[string, string]> };
    // Stand in for an edited source: record another hash for one file of each kind, in turn.
    for (const pick of ['workflows/', 'src/todo/', 'src/session/', 'node_modules/@temporalio/workflow/', 'node_modules/@temporalio/common/']) {
      const index = entry.files.findIndex(([path]) => relative(ROOT, path).startsWith(pick));
      assert.ok(index >= 0, pick);
      const stale = structuredClone(entry);
      stale.files[index]![1] = '0'.repeat(64);
      writeFileSync(file, JSON.stringify(stale));
      forgetBundlesInMemory();
      await bundleSessionWorkflows(POLICY, { cacheDir });
      const rebuilt = JSON.parse(readFileSync(file, 'utf8')) as { files: Array<[string, string]> };
      assert.deepEqual(rebuilt.files[index], entry.files[index], `a change in ${pick} rebuilt the bundle`);
    }
  });

  test('a bundle cached with another recipe (an older release that preloaded nothing) is built again', async () => {
    const file = bundleCacheFile(POLICY, cacheDir);
    const entry = JSON.parse(readFileSync(file, 'utf8')) as { code: string; files: Array<[string, string]>; recipe?: string };
    const { recipe, ...older } = entry;
    assert.ok(recipe?.includes('workflow-api'), 'the recipe names the preloaded modules');
    writeFileSync(file, JSON.stringify({ ...older, code: 'stale' }));
    forgetBundlesInMemory();
    const { code } = await bundleSessionWorkflows(POLICY, { cacheDir });
    assert.notEqual(code, 'stale');
    assert.equal((JSON.parse(readFileSync(file, 'utf8')) as { recipe?: string }).recipe, recipe);
  });

  test('the modules a worker shares between its sessions (preloaded) hold no state of their own', async () => {
    const { code } = await bundleSessionWorkflows(POLICY, { cacheDir });
    const preload = /exports\.preloadModules = function preloadModules\(\) \{([\s\S]*?)\n\}/.exec(code);
    assert.ok(preload, 'the bundle has a preloadModules function');
    for (const module of ['workflows/messages', 'src/session/workflow-api']) assert.ok(preload[1]!.includes(module), `${module} is preloaded`);
    // What they import is shared with them: the session's wire contract, and every file of the pure domain.
    const entry = JSON.parse(readFileSync(bundleCacheFile(POLICY, cacheDir), 'utf8')) as { files: Array<[string, string]> };
    const shared = entry.files.map(([path]) => relative(ROOT, path)).filter((file) => file === 'workflows/messages.ts' || /^src\/(session|todo)\//.test(file));
    assert.ok(shared.length > 10, 'the domain files are in the bundle');
    for (const file of shared) {
      const source = readFileSync(join(ROOT, file), 'utf8');
      // Module-level mutable bindings or collections would be one value for every session of a worker.
      assert.doesNotMatch(source, /^(export )?(let|var) /m, `${file} has a module-level let/var`);
      assert.doesNotMatch(source, /^(export )?const \w+(: [^=]+)? = new (Map|Set|WeakMap|WeakSet|Array)\b/m, `${file} has a module-level collection`);
      assert.doesNotMatch(source, /from '(\.\.\/)+workflows\/(?!messages')/, `${file} imports workflow code that keeps per-session state`);
    }
  });

  test('the bundle runs: replaying a recorded history with it succeeds', async () => {
    const workflowBundle = await bundleSessionWorkflows(POLICY, { cacheDir });
    const history = JSON.parse(readFileSync(join(ROOT, 'test', 'histories', 'single-policy.json'), 'utf8'));
    await Worker.runReplayHistory({ workflowBundle }, history, 'bundle-check');
  });
});
