import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { RequestTracing } from '../tracing';

/** The methods of requests that change something: each is the root of a trace (or joins its caller's). */
const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A server span for every request that changes something (`POST /sessions/{id}/messages` is the
 * root of the turn it begins), named by its route once routing found it. Reads are not traced:
 * the dashboard and event streams poll several times a second, and a trace per poll would bury
 * the turns (Prometheus metrics time them instead).
 */
export function traceChanges(tracing: RequestTracing): MiddlewareHandler {
  return async (c, next) => {
    if (!CHANGES.has(c.req.method)) return next();
    await tracing.serverSpan({ method: c.req.method, path: c.req.path, headers: c.req.raw.headers }, async () => {
      await next();
      const route = routePath(c, -1);
      return { status: c.res.status, ...(route !== '*' && route !== '/*' ? { route } : {}) };
    });
  };
}
