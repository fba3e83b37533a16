import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { assertTodoPolicy, type TodoPolicy } from '../todo';

/** The workflow entry point next to this file, compiled (`dist/`) or TypeScript (`tsx`). */
export function workflowsPath(): string {
  const dir = join(__dirname, '..', '..', 'workflows');
  for (const file of ['index.js', 'index.ts']) {
    if (existsSync(join(dir, file))) return join(dir, file);
  }
  throw new Error(`workflow code not found in ${dir}; run \`npm run build\``);
}

/** The constant the workflow's `deploymentPolicy()` reads. */
const POLICY_CONSTANT = '__AGENT_SESSIONS_ALLOW_PARALLEL_IN_PROGRESS__';

const inProcess = new Map<string, Promise<WorkflowBundle>>();

/**
 * Bundles the session workflow with the deployment's policy baked in (webpack `DefinePlugin`),
 * so only the worker's own configuration can set it. Bundles are kept in memory for the
 * process and on disk under the per-user cache, keyed by a hash of the workflow sources, the
 * SDK version and the policy: a second worker or `replay` on unchanged code skips webpack.
 *
 * @throws TypeError when the policy is missing or not a boolean.
 */
export function bundleSessionWorkflows(policy: TodoPolicy): Promise<WorkflowBundle> {
  assertTodoPolicy(policy, 'bundleSessionWorkflows()');
  // Per process the sources are fixed: hash them (for the disk cache) only on the first call.
  const slot = `parallel=${policy.allowParallelInProgress}`;
  let bundle = inProcess.get(slot);
  if (bundle === undefined) {
    const entry = workflowsPath();
    bundle = loadOrBuild(entry, bundleKey(entry, policy), policy);
    inProcess.set(slot, bundle);
    bundle.catch(() => inProcess.delete(slot));
  }
  return bundle;
}

async function loadOrBuild(entry: string, key: string, policy: TodoPolicy): Promise<WorkflowBundle> {
  const file = join(bundleCacheDir(), `${key}.js`);
  try {
    return { code: readFileSync(file, 'utf8') };
  } catch {
    // Not cached yet: build it below.
  }
  const workerRequire = createRequire(require.resolve('@temporalio/worker'));
  const webpack = workerRequire('webpack') as { DefinePlugin: new (definitions: Record<string, string>) => unknown };
  const { code } = await bundleWorkflowCode({
    workflowsPath: entry,
    logger: quietLogger,
    webpackConfigHook: (config) => {
      config.plugins = [
        ...(config.plugins ?? []),
        new webpack.DefinePlugin({ [POLICY_CONSTANT]: JSON.stringify(policy.allowParallelInProgress) }) as never,
      ];
      return config;
    },
  });
  try {
    mkdirSync(bundleCacheDir(), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, code);
    renameSync(temporary, file);
  } catch {
    // A read-only cache only costs the next start a rebuild.
  }
  return { code };
}

function bundleCacheDir(): string {
  const base =
    process.env.AGENT_SESSIONS_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'agent-sessions');
  return join(base, 'bundles');
}

function bundleKey(entry: string, policy: TodoPolicy): string {
  const hash = createHash('sha256');
  const root = join(entry, '..', '..');
  for (const dir of [join(root, 'workflows'), join(root, 'src', 'todo')]) {
    for (const file of sourceFiles(dir)) hash.update(file).update(readFileSync(file));
  }
  for (const pkg of ['@temporalio/workflow/package.json', 'zod/package.json']) {
    hash.update(readFileSync(require.resolve(pkg)));
  }
  hash.update(`parallel=${policy.allowParallelInProgress}`);
  return `session-${hash.digest('hex').slice(0, 24)}-${policy.allowParallelInProgress ? 'parallel' : 'single'}`;
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return sourceFiles(path);
      return /\.(ts|js)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
    });
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`workflow bundler: ${message}\n`),
  error: (message: string) => process.stderr.write(`workflow bundler: ${message}\n`),
};
