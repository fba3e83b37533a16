import type { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { InvalidSettingError } from '../client/errors';
import type { AllowedHosts } from './allowed-hosts';
import { HttpRefusal } from './http-errors';

/** What {@link guardRequests} checks against. */
export interface RequestGuards {
  /** The `Host` names the service answers to. */
  hosts: AllowedHosts;
  /** Origins allowed by CORS (and so allowed to write); empty: only the service's own pages. */
  corsOrigins: readonly string[];
  /** When set, `Authorization: Bearer <token>` is required except on {@link RequestGuards.public} paths. */
  token: string | undefined;
  /** Largest request body in bytes. */
  bodyLimitBytes: number;
  /** Paths that hold no data and need no token: the dashboard's files and `/healthz`. */
  isPublic: (path: string) => boolean;
}

/** The characters a bearer token can carry (RFC 6750 `b64token`), the same Hono's `bearerAuth` accepts. */
const TOKEN = /^[A-Za-z0-9._~+/-]+=*$/;
const SAFE_METHOD = /^(GET|HEAD|OPTIONS)$/;

/**
 * Installs, in this order, the checks every request passes before a route sees it:
 *
 * 1. `Host` is one of the service's own names, else 421 (a DNS-rebinding page sends its own name).
 * 2. CORS for the configured origins only (Hono's `cors`); no origin configured, no CORS header.
 * 3. A write carrying an `Origin` other than the service's own or a configured one is refused
 *    with 403, whatever its `Content-Type` (a client that is no browser can send a JSON POST with
 *    any Origin and no preflight); so is one whose `Sec-Fetch-Site` says another site sent it.
 *    A request with neither header is not a page's and goes on to the next check; curl and
 *    scripts send neither.
 * 4. A write whose body is not `application/json` is refused with 415; a POST with no body and no
 *    `Content-Type` (`curl -X POST …/turn/start`) is fine.
 * 5. The bearer token, when configured (Hono's `bearerAuth`, constant-time): 401 without it or
 *    with a wrong one, 400 for an `Authorization` header that is not `Bearer <token>`.
 * 6. The body limit, 413; the connection is then closed and the answer says so (below).
 *
 * @throws InvalidSettingError when the token holds characters a bearer token cannot carry.
 */
export function guardRequests(app: OpenAPIHono, guards: RequestGuards): void {
  const { hosts, corsOrigins, token } = guards;

  app.use('*', async (c, next) => {
    const host = c.req.header('Host');
    if (!hosts.accepts(host)) {
      throw new HttpRefusal(
        421,
        'misdirected-request',
        `this service does not answer to the Host ${JSON.stringify(host ?? '')}; it answers to ${hosts.describe()}. ` +
          'To serve it under another name, add that name to AGENT_SESSIONS_ALLOWED_HOSTS (comma-separated host or host:port)',
      );
    }
    await next();
  });

  if (corsOrigins.length > 0) {
    app.use('*', cors({ origin: [...corsOrigins], allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'Last-Event-ID'], exposeHeaders: ['ETag', 'X-Next-Page-Token'] }));
  }

  app.use('*', async (c, next) => {
    if (SAFE_METHOD.test(c.req.method)) return next();
    const origin = c.req.header('Origin');
    const site = c.req.header('Sec-Fetch-Site');
    // An Origin must be this service's own or a configured one, whatever the Content-Type: any
    // client can send a JSON POST with a foreign Origin and no preflight. Without Origin, a
    // browser's Sec-Fetch-Site still says when a page of another site sent it.
    const allowed =
      origin !== undefined ? origin === new URL(c.req.url).origin || corsOrigins.includes(origin) : site === undefined || site === 'same-origin' || site === 'none';
    if (!allowed) {
      throw new HttpRefusal(
        403,
        'forbidden-origin',
        `a page of ${origin ?? 'another site'} may not send ${c.req.method} requests here: only this service's own pages and the origins listed in AGENT_SESSIONS_CORS_ORIGINS may change anything`,
      );
    }
    await next();
  });

  app.use('*', async (c, next) => {
    if (SAFE_METHOD.test(c.req.method)) return next();
    const type = c.req.header('Content-Type');
    const hasBody = c.req.header('Transfer-Encoding') !== undefined || Number(c.req.header('Content-Length') ?? '0') > 0;
    if (type === undefined ? hasBody : !isJson(type)) {
      throw new HttpRefusal(
        415,
        'unsupported-media-type',
        `request bodies must be JSON sent with Content-Type: application/json, got ${type === undefined ? 'no Content-Type' : JSON.stringify(type)}` +
          " (curl -d sends application/x-www-form-urlencoded: add -H 'Content-Type: application/json')",
      );
    }
    return next();
  });

  if (token !== undefined && token !== '') {
    if (!TOKEN.test(token)) {
      throw new InvalidSettingError(
        'AGENT_SESSIONS_TOKEN holds characters a bearer token cannot carry: use only letters, digits and . _ ~ + / - (e.g. the output of `openssl rand -hex 32`)',
      );
    }
    const refusal = { error: 'this service needs Authorization: Bearer <token> (the AGENT_SESSIONS_TOKEN it was started with)', code: 'unauthorized' };
    const auth = bearerAuth({
      token,
      realm: 'agent-sessions',
      noAuthenticationHeader: { message: refusal },
      invalidAuthenticationHeader: { message: { error: 'the Authorization header must read "Bearer <token>"', code: 'invalid-input' } },
      invalidToken: { message: refusal },
    });
    const needsToken: MiddlewareHandler = (c, next) => (c.req.method === 'OPTIONS' || guards.isPublic(c.req.path) ? next() : auth(c, next));
    app.use('*', needsToken);
  }

  app.use(
    '*',
    bodyLimit({
      maxSize: guards.bodyLimitBytes,
      onError: (c) => {
        // The rest of the body is not read. Left open, the connection would be dropped by the
        // server a moment later after an answer that said keep-alive; say "close" instead.
        c.header('Connection', 'close');
        return c.json({ error: `the request body is larger than ${guards.bodyLimitBytes} bytes`, code: 'body-too-large' }, 413);
      },
    }),
  );
}

/** `application/json`, with or without parameters (`; charset=utf-8`). */
function isJson(contentType: string): boolean {
  return contentType.split(';')[0]!.trim().toLowerCase() === 'application/json';
}
