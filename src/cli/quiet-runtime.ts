/** Temporal's runtime logs every worker state change at INFO; a CLI shows only warnings. */
export function quietTemporalRuntime(): void {
  // Loaded lazily: only commands that run workflow code need the worker package.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Runtime, DefaultLogger } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by an earlier command in this process.
  }
}
