import type { BundleOptions, BundlerPlugin } from '@temporalio/worker';
import type { TodoPolicy } from '../todo';
import { preloadedModulePaths, tracingInterceptorsPath } from './workflows-path';

// Derived: @temporalio/worker does not export its webpack configuration type from its root.
type WebpackConfiguration = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/** The constant the workflow's `deploymentPolicy()` reads (a bare identifier, so webpack substitutes it). */
export const POLICY_CONSTANT = '__AGENT_SESSIONS_ALLOW_PARALLEL_IN_PROGRESS__';

/** The constant the bundle's tracing interceptors read: whether this worker exports traces. */
export const TRACING_CONSTANT = '__AGENT_SESSIONS_TRACING__';

/** A webpack plugin, as far as this module uses one. */
interface WebpackPlugin {
  apply(compiler: { webpack: { DefinePlugin: new (definitions: Record<string, string>) => WebpackPlugin } }): void;
}

/**
 * Bundle options for the session workflows: `policy` and `tracing` baked into the workflow code as
 * {@link POLICY_CONSTANT} and {@link TRACING_CONSTANT} (webpack `DefinePlugin`, chaining the
 * `webpackConfigHook` already there), and the tracing interceptors added to the interceptor
 * modules. Every bundle carries those interceptors, inert unless `tracing`: they decide where an
 * update's completion falls among a task's commands, so a history replays only on a bundle that
 * has them, and a worker's build id does not change with tracing (the files are the same). The
 * stateless modules of {@link preloadedModulePaths} are evaluated once per worker, not per session.
 */
export function withPolicyDefined(options: BundleOptions, policy: TodoPolicy, tracing = false): BundleOptions {
  const previous = options.webpackConfigHook;
  const definitions = { [POLICY_CONSTANT]: JSON.stringify(policy.allowParallelInProgress), [TRACING_CONSTANT]: JSON.stringify(tracing) };
  const webpackConfigHook = (config: WebpackConfiguration): WebpackConfiguration => {
    const merged = previous ? previous(config) : config;
    // webpack is taken from the running compiler: it is @temporalio/worker's dependency, not ours.
    const defineConstants: WebpackPlugin = {
      apply(compiler) {
        new compiler.webpack.DefinePlugin(definitions).apply(compiler);
      },
    };
    return { ...merged, plugins: [...(merged.plugins ?? []), defineConstants as never] };
  };
  return {
    ...options,
    webpackConfigHook,
    workflowInterceptorModules: [...(options.workflowInterceptorModules ?? []), tracingInterceptorsPath()],
    preloadModules: [...(options.preloadModules ?? []), ...preloadedModulePaths()],
  };
}

/** A bundler plugin that only shapes the bundle: what bundling alone needs of {@link AgentSessionsPlugin}. */
export function policyBundler(policy: TodoPolicy, tracing = false): BundlerPlugin {
  return { name: 'agent-sessions.policy', configureBundler: (options) => withPolicyDefined(options, policy, tracing) };
}
