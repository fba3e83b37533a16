/** Small statistics for the benchmark: percentiles, medians, a least-squares line. */

/** p50/p95/p99 (nearest rank), mean, min, max and count of a sample, in its unit. */
export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** The nearest-rank percentile `p` (0–100) of an ascending-sorted sample. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** Summarises a sample (not modified). */
export function summarize(sample: readonly number[]): Summary {
  const sorted = [...sample].sort((a, b) => a - b);
  const sum = sorted.reduce((total, x) => total + x, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** The median of a sample. */
export function median(sample: readonly number[]): number {
  const sorted = [...sample].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** y ≈ slope·x + intercept by least squares. */
export interface LineFit {
  slope: number;
  intercept: number;
  /** Largest |y − fit| over the points. */
  maxResidual: number;
}

export function fitLine(points: ReadonlyArray<{ x: number; y: number }>): LineFit {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const intercept = my - slope * mx;
  const maxResidual = Math.max(...points.map((p) => Math.abs(p.y - (slope * p.x + intercept))));
  return { slope, intercept, maxResidual };
}

/** Milliseconds since an arbitrary origin, sub-millisecond. */
export function now(): number {
  return performance.now();
}

/** Times one call in milliseconds. */
export async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await call();
  return { ms: performance.now() - start, value };
}
