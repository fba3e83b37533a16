import { Counter, Histogram, type Registry } from './prom-client';

/**
 * The counter `name` of `registry`, created on first use. Two users of one registry (a worker
 * and the HTTP service in one process, both counting `todo_write`) share one counter instead of
 * prom-client refusing the second registration.
 */
export function counterOn<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing as Counter<L>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

/** The histogram `name` of `registry` with `buckets` (in seconds), created on first use. */
export function histogramOn<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: readonly number[],
): Histogram<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Histogram) return existing as Histogram<L>;
  return new Histogram({ name, help, labelNames, buckets: [...buckets], registers: [registry] });
}
