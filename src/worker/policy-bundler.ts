import type { BundleOptions, BundlerPlugin } from '@temporalio/worker';
import type { TodoPolicy } from '../todo';

// Derived: @temporalio/worker does not export its webpack configuration type from its root.
type WebpackConfiguration = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/** The constant the workflow's `deploymentPolicy()` reads (a bare identifier, so webpack substitutes it). */
export const POLICY_CONSTANT = '__AGENT_SESSIONS_ALLOW_PARALLEL_IN_PROGRESS__';

/** A webpack plugin, as far as this module uses one. */
interface WebpackPlugin {
  apply(compiler: { webpack: { DefinePlugin: new (definitions: Record<string, string>) => WebpackPlugin } }): void;
}

/**
 * Bundle options that bake `policy` into the workflow code as {@link POLICY_CONSTANT} (webpack
 * `DefinePlugin`), chaining the `webpackConfigHook` already there.
 */
export function withPolicyDefined(options: BundleOptions, policy: TodoPolicy): BundleOptions {
  const previous = options.webpackConfigHook;
  const definitions = { [POLICY_CONSTANT]: JSON.stringify(policy.allowParallelInProgress) };
  const webpackConfigHook = (config: WebpackConfiguration): WebpackConfiguration => {
    const merged = previous ? previous(config) : config;
    // webpack is taken from the running compiler: it is @temporalio/worker's dependency, not ours.
    const definePolicy: WebpackPlugin = {
      apply(compiler) {
        new compiler.webpack.DefinePlugin(definitions).apply(compiler);
      },
    };
    return { ...merged, plugins: [...(merged.plugins ?? []), definePolicy as never] };
  };
  return { ...options, webpackConfigHook };
}

/** A bundler plugin that only bakes the policy in: what bundling alone needs of {@link AgentSessionsPlugin}. */
export function policyBundler(policy: TodoPolicy): BundlerPlugin {
  return { name: 'agent-sessions.policy', configureBundler: (options) => withPolicyDefined(options, policy) };
}
