import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, type BundleOptions, type BundlerPlugin, type WorkflowBundle } from '@temporalio/worker';
import { userCacheDir } from '../config/paths';
import { assertTodoPolicy, type TodoPolicy } from '../todo';
import { packagePath, type BuildInput } from './build-id';
import { policyBundler, withPolicyDefined } from './policy-bundler';
import { forkCapturePath, workflowsPath } from './workflows-path';

type WebpackConfiguration = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/** Options of {@link bundleSessionWorkflows}. */
export interface BundleSessionWorkflowsOptions {
  /**
   * The per-user cache folder (default: `~/.cache/agent-sessions`, from the home folder alone;
   * the CLI passes the one its settings resolve from `AGENT_SESSIONS_CACHE_DIR` or `XDG_CACHE_HOME`).
   */
  cacheDir?: string;
  /**
   * Also bundle the fork capture's workflow interceptor (`workflows/fork-capture.ts`), which
   * hands the session's state to a sink at the end of every activation: the bundle a fork
   * replays a history with, never a worker's.
   */
  forkCapture?: boolean;
  /**
   * Whether the bundle's tracing interceptors trace (default false): for a worker that exports
   * traces. Both bundles are built from the same files, so a worker's build id is the same
   * with tracing on or off.
   */
  tracing?: boolean;
}

/**
 * A cached bundle, the files webpack read to build it, each with its hash, and how it was put
 * together (see {@link bundleRecipe}).
 */
interface CachedBundle {
  code: string;
  files: Array<[path: string, sha256: string]>;
  recipe?: string;
}

/**
 * What shapes a bundle beside its files: the interceptor modules it registers and the modules it
 * preloads, read from the options it is built with once the policy plugin has shaped them. A
 * bundle built with another recipe (an older release of this package, say, that preloaded
 * nothing) is built again, though every file it read is unchanged.
 */
function bundleRecipe(base: BundleOptions, policy: TodoPolicy, tracing: boolean): string {
  const shaped = withPolicyDefined(base, policy, tracing);
  return JSON.stringify({ interceptors: (shaped.workflowInterceptorModules ?? []).map(packagePath), preload: (shaped.preloadModules ?? []).map(packagePath) });
}

const inProcess = new Map<string, Promise<WorkflowBundle>>();

/** The files each bundle of this process was built from, for its build id. */
const inputsOf = new WeakMap<WorkflowBundle, readonly BuildInput[]>();

/**
 * The files `bundle` was built from (paths inside the package, with their hashes), when it came
 * from {@link bundleSessionWorkflows}; `undefined` for a bundle built any other way.
 */
export function workflowBundleInputs(bundle: WorkflowBundle): readonly BuildInput[] | undefined {
  return inputsOf.get(bundle);
}

/**
 * Bundles the session workflows with the deployment's policy baked in, as
 * `AgentSessionsPlugin` does (so only the worker's own configuration can set it). A bundle is
 * kept in memory for the process and on disk under the per-user cache, with the list of every
 * file webpack read to build it (the workflow sources, the domain, the SDK and zod, each with its
 * hash): a bundle is reused only while every one of those files is unchanged, so a change in
 * any bundled file, or a different installed dependency, rebuilds it.
 *
 * @throws TypeError when the policy is missing or not a boolean.
 */
export function bundleSessionWorkflows(policy: TodoPolicy, options: BundleSessionWorkflowsOptions = {}): Promise<WorkflowBundle> {
  assertTodoPolicy(policy, 'bundleSessionWorkflows()');
  const cacheDir = options.cacheDir ?? userCacheDir();
  const capture = options.forkCapture === true;
  const tracing = options.tracing === true;
  const slot = `${cacheDir}|parallel=${policy.allowParallelInProgress}|capture=${capture}|tracing=${tracing}`;
  let bundle = inProcess.get(slot);
  if (bundle === undefined) {
    bundle = loadOrBuild(policy, cacheDir, { forkCapture: capture, tracing });
    inProcess.set(slot, bundle);
    bundle.catch(() => inProcess.delete(slot));
  }
  return bundle;
}

/**
 * Bundles the session workflows with other bundler plugins composed after ours (interceptor
 * modules, a user's own rewrites). Not cached: what another plugin adds cannot be fingerprinted.
 */
export async function bundleWithPlugins(policy: TodoPolicy, plugins: readonly BundlerPlugin[], options: { tracing?: boolean } = {}): Promise<WorkflowBundle> {
  const { code } = await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: quietLogger, plugins: [policyBundler(policy, options.tracing === true), ...plugins] });
  return { code };
}

/** Forgets the bundles kept in memory, so the next call looks at the disk cache again (for tools and tests). */
export function forgetBundlesInMemory(): void {
  inProcess.clear();
}

/** Which variant of the session bundle: with the fork capture's interceptor, with tracing on. */
interface BundleVariant {
  forkCapture?: boolean;
  tracing?: boolean;
}

/** The disk cache file of the bundle for `policy` (and its variant): `{ code, files: [[path, sha256], ...] }`. */
export function bundleCacheFile(policy: TodoPolicy, cacheDir: string = userCacheDir(), variant: BundleVariant = {}): string {
  const suffix = `${variant.forkCapture === true ? '-fork-capture' : ''}${variant.tracing === true ? '-traced' : ''}`;
  return join(cacheDir, 'bundles', `session-${policy.allowParallelInProgress ? 'parallel' : 'single'}${suffix}-${entryKey()}.json`);
}

async function loadOrBuild(policy: TodoPolicy, cacheDir: string, variant: BundleVariant): Promise<WorkflowBundle> {
  const file = bundleCacheFile(policy, cacheDir, variant);
  const tracing = variant.tracing === true;
  const base: BundleOptions = { workflowsPath: workflowsPath(), ...(variant.forkCapture === true ? { workflowInterceptorModules: [forkCapturePath()] } : {}) };
  const recipe = bundleRecipe(base, policy, tracing);
  const cached = readCached(file, recipe);
  if (cached !== undefined) return withInputs({ code: cached.code }, cached.files);

  let files: string[] = [];
  const recordInputs = {
    name: 'agent-sessions.bundle-inputs',
    configureBundler: (options: BundleOptions): BundleOptions => {
      const previous = options.webpackConfigHook;
      return {
        ...options,
        webpackConfigHook: (config: WebpackConfiguration): WebpackConfiguration => {
          const merged = previous ? previous(config) : config;
          const recorder = {
            apply(compiler: { hooks: { done: { tap(name: string, fn: (stats: { compilation: { fileDependencies: Iterable<string> } }) => void): void } } }) {
              compiler.hooks.done.tap('agent-sessions.bundle-inputs', (stats) => {
                // Directories appear too (package roots webpack resolved from): their files are listed.
                files = [...stats.compilation.fileDependencies].filter((path) => isFile(path)).sort();
              });
            },
          };
          return { ...merged, plugins: [...(merged.plugins ?? []), recorder as never] };
        },
      };
    },
  };
  const { code } = await bundleWorkflowCode({ ...base, logger: quietLogger, plugins: [policyBundler(policy, tracing), recordInputs] });
  const entry: CachedBundle = { code, files: files.map((path) => [path, sha256(readFileSync(path))]), recipe };
  try {
    mkdirSync(join(cacheDir, 'bundles'), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(entry));
    renameSync(temporary, file);
  } catch {
    // A read-only cache, or an input that vanished, only costs the next start a rebuild.
  }
  return withInputs({ code }, entry.files);
}

function withInputs(bundle: WorkflowBundle, files: CachedBundle['files']): WorkflowBundle {
  inputsOf.set(bundle, files.map(([path, hash]): BuildInput => [packagePath(path), hash]));
  return bundle;
}

/** A cached bundle built with `recipe` whose every input is unchanged, or `undefined`. */
function readCached(file: string, recipe: string): CachedBundle | undefined {
  let entry: CachedBundle;
  try {
    entry = JSON.parse(readFileSync(file, 'utf8')) as CachedBundle;
  } catch {
    return undefined;
  }
  if (typeof entry.code !== 'string' || !Array.isArray(entry.files) || entry.files.length === 0 || entry.recipe !== recipe) return undefined;
  for (const [path, hash] of entry.files) {
    try {
      if (sha256(readFileSync(path)) !== hash) return undefined;
    } catch {
      return undefined;
    }
  }
  return entry;
}

/** Names the cache entry by where the workflow code is, so two checkouts keep two entries. */
function entryKey(): string {
  return sha256(workflowsPath()).slice(0, 16);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`workflow bundler: ${message}\n`),
  error: (message: string) => process.stderr.write(`workflow bundler: ${message}\n`),
};
