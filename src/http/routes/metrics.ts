import { createRoute, type OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import { TRANSPORT_ERRORS } from './route-docs';
import type { Registry } from '../../metrics/prom-client';

/** An error answer: the JSON `Error` the other routes declare. */
function error(description: string) {
  return { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
}

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
        400: error('An Authorization header that is not "Bearer <token>" (invalid-input)'),
        401: error('Missing or wrong bearer token (unauthorized), when the service has one'),
        421: error('A Host this service does not answer to (misdirected-request)'),
        500: error('An unexpected failure of the service (internal-error)'),
        ...TRANSPORT_ERRORS,
        // Declared loosely: the answer is Prometheus text, which the typed responses cannot name.
      } as RouteConfig['responses'],
    }),
    async (c) => {
      c.header('Content-Type', registry.contentType);
      return c.body(await registry.metrics(), 200);
    },
  );
}
