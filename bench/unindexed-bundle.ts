/**
 * A bundler plugin, for the bench alone: builds the session workflows with
 * `bench/unindexed-session-index.ts` in place of `workflows/session-index.ts`, so sessions make no
 * search-attribute upserts. The latency and throughput measurements run it as a third side next
 * to ours and the bare workflow, to measure what the upsert costs rather than guess it.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { BundlerPlugin } from '@temporalio/worker';
import type * as Webpack from 'webpack';
import type { Bench } from './setup';

// The webpack the SDK's bundler runs (not a dependency of the project's own).
const { NormalModuleReplacementPlugin } = createRequire(require.resolve('@temporalio/worker'))('webpack') as typeof Webpack;

const REAL = /[\\/]workflows[\\/]session-index(\.ts|\.js)?$/;
const STAND_IN = join(__dirname, 'unindexed-session-index.ts');

export const unindexedBundle: BundlerPlugin = {
  name: 'agent-sessions.bench.unindexed',
  configureBundler(options) {
    const previous = options.webpackConfigHook;
    return {
      ...options,
      webpackConfigHook: (config) => {
        const base = previous !== undefined ? previous(config) : config;
        let replaced = 0;
        const replacement = new NormalModuleReplacementPlugin(/session-index/, (resource: { request: string; context: string }) => {
          if (!REAL.test(join(resource.context, resource.request))) return;
          resource.request = STAND_IN;
          replaced++;
        });
        // Checked after the build: a bundle that still indexes would measure nothing.
        const check = {
          apply: (compiler: { hooks: { done: { tap(name: string, fn: () => void): void } } }) =>
            compiler.hooks.done.tap('agent-sessions.bench.unindexed', () => {
              if (replaced === 0) throw new Error('bench/unindexed-bundle: workflows/session-index was not found in the bundle; nothing was replaced');
            }),
        };
        return { ...base, plugins: [...(base.plugins ?? []), replacement, check] };
      },
    };
  },
};

type Queue = Awaited<ReturnType<Bench['openQueue']>>;
const queues = new WeakMap<Bench, Promise<Queue>>();

/**
 * The run's queue of sessions without the upsert: one worker on {@link unindexedBundle} and a
 * client for it, opened once per run for every measurement that compares with it (closed with the bench).
 */
export function unindexedQueue(bench: Bench): Promise<Queue> {
  let queue = queues.get(bench);
  if (queue === undefined) {
    bench.progress('bundling the bench-only sessions without the upsert…');
    queue = bench.openQueue('unindexed', { worker: { plugins: [unindexedBundle] } });
    queues.set(bench, queue);
  }
  return queue;
}
