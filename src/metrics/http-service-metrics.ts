import type { Histogram, Registry } from './prom-client';
import { HTTP_REQUEST_BUCKETS, METRIC_NAMES } from './metric-names';
import { histogramOn } from './registered-metric';
import { TodoWriteMetrics } from './todo-write-metrics';

/** What the HTTP service counts: its own `todo_write` answers and every request it answered. */
export class HttpServiceMetrics {
  readonly todoWrites: TodoWriteMetrics;
  private readonly requestSeconds: Histogram<'route' | 'method' | 'status'>;

  constructor(registry: Registry) {
    this.todoWrites = new TodoWriteMetrics(registry);
    this.requestSeconds = histogramOn(
      registry,
      METRIC_NAMES.httpRequestDuration,
      'HTTP requests the service answered, in seconds until the answer began, by route template, method and status',
      ['route', 'method', 'status'],
      HTTP_REQUEST_BUCKETS,
    );
  }

  /** Records one answered request; `route` is the route's template (`/sessions/{id}/todos`). */
  request(route: string, method: string, status: number, seconds: number): void {
    this.requestSeconds.observe({ route, method, status: String(status) }, seconds);
  }
}
