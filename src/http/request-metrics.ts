import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { matchedRoutes } from 'hono/route';
import { UNMATCHED_ROUTE, type HttpServiceMetrics } from '../metrics';

/**
 * Times every request the service answers into `agent_sessions_http_request_duration_seconds`,
 * refusals included (a wrong `Host`, a missing token): installed before every other middleware.
 * The time is until the answer begins (an event stream's, until its first byte).
 */
export function meterRequests(app: OpenAPIHono, metrics: HttpServiceMetrics): void {
  app.use('*', async (c, next) => {
    const began = performance.now();
    await next();
    metrics.request(routeTemplate(c), c.req.method, c.res.status, (performance.now() - began) / 1000);
  });
}

/**
 * The template of the route that serves the request, as the OpenAPI document writes it
 * (`/sessions/{id}/todos`), or {@link UNMATCHED_ROUTE}: never the raw path, whose session ids
 * would make one series per session.
 */
export function routeTemplate(c: Context): string {
  // Middleware installed with `use` matches every method ("ALL"); the route itself names its own.
  const route = matchedRoutes(c).findLast((r) => r.method !== 'ALL');
  return route === undefined ? UNMATCHED_ROUTE : route.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}');
}
