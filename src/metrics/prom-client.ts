/**
 * prom-client's `Registry`, `Counter` and `Histogram`, each required from its own file. The
 * package's index also loads its default process metrics, and with them `@opentelemetry/api` (for
 * exemplars): a process that does not trace must load no OpenTelemetry module at all
 * (docs/observability.md), so nothing here goes through that index. The types are the package's own.
 */
import type * as PromClient from 'prom-client';

// eslint-disable-next-line @typescript-eslint/no-require-imports
export const Registry = require('prom-client/lib/registry') as typeof PromClient.Registry;
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const Counter = require('prom-client/lib/counter') as typeof PromClient.Counter;
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const Histogram = require('prom-client/lib/histogram') as typeof PromClient.Histogram;

export type Registry = PromClient.Registry;
export type Counter<T extends string = string> = PromClient.Counter<T>;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;
