import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { Registry } from '../../metrics/prom-client';

/**
 * `GET /metrics`: what this service counted (its `todo_write` answers, its requests) in
 * Prometheus' text format. Behind the bearer token when one is set, like every route but
 * `/healthz`: give Prometheus the token (`authorization` in its scrape config).
 */
export function metricsRoutes(app: OpenAPIHono, registry: Registry): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/metrics',
      summary: "This service's metrics in Prometheus' text format (docs/observability.md)",
      responses: {
        200: { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
        401: { description: 'Missing or wrong bearer token' },
      },
    }),
    async (c) => {
      c.header('Content-Type', registry.contentType);
      return c.body(await registry.metrics(), 200);
    },
  );
}
