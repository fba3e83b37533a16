/**
 * Where a write's milliseconds go inside the worker: a CPU profile (V8's sampling profiler, through
 * `node:inspector`) of a session worker and of the versioned bare worker, each in this process
 * (`debugMode`: the workflow sandbox runs on the main thread, where the profiler sees it), while
 * each serves the same load: `sessions` new workflows, each created by a first write
 * (update-with-start) and then written `writes` times. Prints, for each side, the worker's CPU
 * per write and per new workflow, and where it goes: the workflow bundle's own code by module
 * (module evaluation included), the SDK inside the sandbox, and the rest of the process.
 *
 *   npx tsx bench/profile-activation.ts [--sessions 100] [--writes 10] [--out /tmp/profiles]
 *
 * Not part of `npm run bench` (a profile slows what it measures); its figures go in the notes of
 * docs/speed.md. Uses TEMPORAL_ADDRESS when set; otherwise starts a dev server as the bench does.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { NativeConnection, Worker } from '@temporalio/worker';
import { connectionOptions, loadSettings } from '../src/config';
import { createWorker } from '../src/worker';
import { buildIdOfCode } from '../src/worker/build-id';
import { registerVersion } from '../src/worker/version-registration';
import { openBench, POLICY, todoList, calls, closeAll, type Bench } from './setup';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sessions: { type: 'string', default: '100' }, writes: { type: 'string', default: '10' }, out: { type: 'string' } } });
  const sessions = Number(values.sessions);
  const writes = Number(values.writes);
  const progress = (message: string): void => void process.stderr.write(`${message}\n`);
  const bench = await openBench(false, progress);
  const inspector = new Session();
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.setSamplingInterval', { interval: 100 });
  try {
    const settings = loadSettings(process.env);
    const config = { ...settings.temporal, address: bench.address };
    // The session worker, as createWorker builds it, in debug mode on a queue of its own.
    const oursQueue = bench.id('prof-ours');
    const ours = await createWorker({ ...POLICY, temporal: { ...config, taskQueue: oursQueue }, cacheDir: settings.paths.cacheDir, workerOptions: { debugMode: true } });
    const oursRun = ours.run();
    await ours.registered();
    const bareQueue = bench.id('prof-bare');
    const connection = await NativeConnection.connect(connectionOptions(config));
    const version = { deploymentName: bareQueue, buildId: buildIdOfCode(bench.bareBundle.code) };
    const bare = await Worker.create({
      connection,
      namespace: config.namespace,
      taskQueue: bareQueue,
      workflowBundle: bench.bareBundle,
      debugMode: true,
      workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' },
    });
    const bareRun = bare.run();
    await registerVersion(connection.workflowService, config.namespace, version, bare.options.identity);

    const sessionsOn = (taskQueue: string): Bench => ({ ...bench, bareQueue: taskQueue });
    const oursClient = await (await import('../src/client')).SessionClient.connect({ ...config, taskQueue: oursQueue });
    const load = async (kind: 'ours' | 'bare'): Promise<string[]> => {
      const ids = Array.from({ length: sessions }, () => bench.id(`prof-${kind}`));
      const c = calls(sessionsOn(bareQueue));
      for (const id of ids) {
        for (let step = 0; step <= writes; step++) {
          if (kind === 'ours') await oursClient.todoWrite(id, todoList(30, step));
          else await c.bareWithStart(id, todoList(30, step));
        }
      }
      return ids;
    };
    const close = (kind: 'ours' | 'bare', ids: string[]): Promise<unknown> =>
      kind === 'ours' ? Promise.all(ids.map((id) => oursClient.close(id))) : closeAll(sessionsOn(bareQueue), { bare: ids });
    // A first round of each side warms the worker up (bundle evaluated, JIT); the second is profiled.
    for (const kind of ['bare', 'ours'] as const) await close(kind, await load(kind));
    const results: Record<string, Profile> = {};
    for (const kind of ['bare', 'ours'] as const) {
      await inspector.post('Profiler.start');
      const ids = await load(kind);
      const { profile } = (await inspector.post('Profiler.stop')) as unknown as { profile: Profile };
      results[kind] = profile;
      await close(kind, ids);
    }
    if (values.out !== undefined) {
      mkdirSync(values.out, { recursive: true });
      for (const [kind, profile] of Object.entries(results)) writeFileSync(join(values.out, `${kind}.cpuprofile`), JSON.stringify(profile));
    }
    const modules = { ours: moduleLines(bench.sessionBundle.code), bare: moduleLines(bench.bareBundle.code) };
    for (const [kind, profile] of Object.entries(results)) report(kind, profile, sessions, writes, modules[kind as 'ours' | 'bare']);
    await oursClient.closeConnection();
    ours.shutdown();
    bare.shutdown();
    await Promise.all([oursRun, bareRun]);
    await connection.close();
  } finally {
    inspector.disconnect();
    await bench.close();
  }
}

/** Self time by where it was spent, in ms per write. */
function report(kind: string, profile: Profile, sessions: number, writes: number, modules: ModuleLines): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, k) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[k] ?? 0) / 1000));
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of self) {
    const frame = byId.get(id)!.callFrame;
    const group =
      frame.functionName === '(idle)'
        ? '(idle)'
        : frame.functionName === '(garbage collector)' || frame.functionName === '(program)'
          ? frame.functionName
          : frame.url.includes('workflow-bundle')
            ? `bundle: ${moduleAt(modules, frame.lineNumber)}`
            : where(frame.url);
    groups.set(group, (groups.get(group) ?? 0) + ms);
    if (group !== '(idle)') total += ms;
    const fn = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
    if (group !== '(idle)') functions.set(fn, (functions.get(fn) ?? 0) + ms);
  }
  const count = sessions * (writes + 1);
  process.stdout.write(`\n== ${kind}: ${sessions} new workflows × (first write + ${writes} writes) = ${count} writes; busy CPU ${total.toFixed(0)} ms = ${(total / count).toFixed(3)} ms per write\n`);
  for (const [group, ms] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 25)) process.stdout.write(`  ${(ms / count).toFixed(4).padStart(8)} ms/write  ${group}\n`);
  process.stdout.write('  top functions (self):\n');
  for (const [fn, ms] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 25)) process.stdout.write(`  ${(ms / count).toFixed(4).padStart(8)} ms/write  ${fn}\n`);
}

/** The first line of each module of a webpack bundle, in order. */
type ModuleLines = Array<{ line: number; path: string }>;

function moduleLines(code: string): ModuleLines {
  const lines: ModuleLines = [];
  code.split('\n').forEach((text, line) => {
    const match = /^\/\*\*\*\/ "(\.\/[^"]+)"/.exec(text);
    if (match) lines.push({ line, path: match[1]!.replace(/^\.\/node_modules\/((?:@[^/]+\/)?[^/]+).*/, '$1') });
  });
  return lines;
}

function moduleAt(modules: ModuleLines, line: number): string {
  let found = '(bundle runtime)';
  for (const module of modules) {
    if (module.line > line) break;
    found = module.path;
  }
  return found;
}

function where(url: string): string {
  if (url === '') return '(native / no script)';
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (mod) return `node_modules: ${mod[1]}`;
  if (url.startsWith('node:')) return 'node internals';
  return url.replace(/^file:\/\//, '').replace(/^\/work\/wt31\//, '');
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
