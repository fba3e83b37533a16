import type { Context, NotFoundHandler } from 'hono';
import type { ErrorAnswer } from './http-errors';

/** A route as Hono lists it in `app.routes` and keeps it beside each handler in its router. */
interface ListedRoute {
  method: string;
  path: string;
}

/** What is read of a Hono app (any of its kinds): its routes and its router. */
interface RoutedApp {
  routes: readonly ListedRoute[];
  router: { match(method: string, path: string): unknown };
}

/**
 * The methods that `path` answers to, from the app's own router (so a path matches exactly as a
 * request would), with `HEAD` beside `GET` (Hono answers a HEAD from the GET route) and `OPTIONS`
 * (answered by {@link notFoundOrNotAllowed}). Empty when no route has that path. Routes for every
 * method (`app.all`, and the middleware `app.use` installs) are not counted: a path that has one
 * is answered by it and never gets here.
 */
export function allowedMethods(app: RoutedApp, path: string): string[] {
  const methods = new Set(app.routes.map((route) => route.method).filter((method) => method !== 'ALL'));
  const allowed = [...methods].filter((method) =>
    matchedRoutes(app, method, path).some((route) => route.method === method),
  );
  if (allowed.length === 0) return [];
  if (allowed.includes('GET')) allowed.push('HEAD');
  allowed.push('OPTIONS');
  const rank = (method: string): number => (ORDER.includes(method) ? ORDER.indexOf(method) : ORDER.length);
  return allowed.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** The order methods are listed in; any other after them. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The routes of `app`'s router that a `method` request for `path` passes through. */
function matchedRoutes(app: RoutedApp, method: string, path: string): ListedRoute[] {
  // Each handler is stored as [handler, route]; the match is [[[handler, route], params], …] (and a stash).
  const [matches] = app.router.match(method, path) as [Array<[[unknown, ListedRoute], unknown]>];
  return matches.map(([[, route]]) => route);
}

/**
 * What answers a request no route took: for a path the service has, `OPTIONS` gets 204 and any
 * other method 405, each with `Allow` naming the path's methods (RFC 9110 §15.5.6), the 405 with
 * the service's JSON error (`method-not-allowed`); for any other path, 404 `no-such-endpoint`.
 */
export function notFoundOrNotAllowed(app: RoutedApp): NotFoundHandler {
  return (c: Context) => {
    const allowed = allowedMethods(app, c.req.path);
    if (allowed.length === 0) {
      const body: ErrorAnswer['body'] = { error: `no such endpoint: ${c.req.method} ${c.req.path}`, code: 'no-such-endpoint' };
      return c.json(body, 404);
    }
    c.header('Allow', allowed.join(', '));
    if (c.req.method === 'OPTIONS') return c.body(null, 204);
    const body: ErrorAnswer['body'] = {
      error: `${c.req.path} does not answer ${c.req.method}: it answers ${allowed.filter((method) => method !== 'OPTIONS').join(', ')}`,
      code: 'method-not-allowed',
    };
    return c.json(body, 405);
  };
}
