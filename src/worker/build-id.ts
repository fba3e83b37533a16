import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { packageRoot } from '../devserver/temporal-server-config';

/** How many hex digits of the content hash a computed build id keeps (48 bits: collisions are not a concern). */
const BUILD_ID_DIGITS = 12;

/** A file that went into a build, by its path and the sha256 of its bytes. */
export type BuildInput = readonly [path: string, sha256: string];

/**
 * The build id of a worker: a hash of the content of the files its workflow bundle was built
 * from and of the modules its activities loaded, each named by its path inside the package (so
 * two checkouts of one release, or two machines, compute the same id, and an unchanged release
 * keeps its id). The parallel policy is not part of it: it is the deployment's setting, baked
 * into the bundle as a constant, and the invariant and the fold replay under either policy.
 *
 * @example
 * computeBuildId(workflowInputs, activityInputs()) // 'b3f9a1c2d4e5f'
 */
export function computeBuildId(workflowInputs: readonly BuildInput[], activityInputs: readonly BuildInput[]): string {
  const hash = createHash('sha256');
  for (const [label, inputs] of [['workflows', workflowInputs], ['activities', activityInputs]] as const) {
    hash.update(`${label}\n`);
    for (const [path, sha] of [...inputs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) hash.update(`${path}\0${sha}\n`);
  }
  return `b${hash.digest('hex').slice(0, BUILD_ID_DIGITS)}`;
}

/** The build id of a bundle whose inputs are not known (one built with a user's bundler plugins): a hash of its code. */
export function buildIdOfCode(code: string): string {
  return `b${sha256(code).slice(0, BUILD_ID_DIGITS)}`;
}

/** `path` as a build input: its path inside the package (or as given, outside it) and the hash of its content. */
export function buildInput(path: string, content: Buffer | string = readFileSync(path)): BuildInput {
  return [packagePath(path), sha256(content)];
}

let activityModulesMemo: string[] | undefined;
let activityInputsMemo: BuildInput[] | undefined;

/**
 * The files of the modules the activities of this worker are made of: `activities/agent-activities`,
 * `activities/fork-activities` and every module they loaded, transitively (Node's own module
 * graph, so what is hashed is what runs, dependencies included). Taken once per process, when
 * `sessions-plugin` has just loaded the activities (it calls this at import): the graph grows
 * whenever one of its modules requires another lazily (Temporal's worker loads webpack only when
 * it bundles, and a fork's replay bundles), so read later it would depend on what the process did
 * first, and a worker that built its bundle would get another build id than one that found it
 * cached, stranding the sessions pinned to the first.
 */
export function activityModules(): readonly string[] {
  if (activityModulesMemo !== undefined) return activityModulesMemo;
  // Loaded already (the worker's plugin imports them); resolving them here names the same modules.
  const roots = [require.resolve('../../activities/agent-activities'), require.resolve('../../activities/fork-activities')].map((entry) => {
    const root = require.cache[entry];
    if (root === undefined) throw new Error(`the activities module ${entry} is not loaded: computeBuildId needs the worker's modules in Node's module cache`);
    return root;
  });
  const seen = new Set<string>();
  const pending: NodeJS.Module[] = [...roots];
  while (pending.length > 0) {
    const module = pending.pop()!;
    if (seen.has(module.filename)) continue;
    seen.add(module.filename);
    pending.push(...module.children);
  }
  activityModulesMemo = [...seen].filter((path) => !path.startsWith('node:'));
  return activityModulesMemo;
}

/** The modules of {@link activityModules} as build inputs, each with its content's hash. Computed once per process. */
export function activityInputs(): BuildInput[] {
  activityInputsMemo ??= activityModules().map((path) => buildInput(path));
  return activityInputsMemo;
}

/** `path` relative to the package root, with `/` separators; a path outside the package stays as it is. */
export function packagePath(path: string): string {
  const inside = relative(packageRoot(), path);
  return inside.startsWith('..') ? path : inside.split('\\').join('/');
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
