import { readFileSync, readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { OpenAPIHono } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import { Registry } from '../metrics/prom-client';
import type { SessionClient } from '../client';
import { HttpServiceMetrics } from '../metrics';
import type { TodoPolicy } from '../todo';
import { AllowedHosts } from './allowed-hosts';
import { errorAnswer } from './http-errors';
import { guardRequests } from './request-guards';
import { meterRequests } from './request-metrics';
import { notFoundOrNotAllowed } from './method-not-allowed';
import { agentRoutes } from './routes/agent';
import { mcpRoutes } from './routes/mcp';
import { toolRoutes } from './routes/tools';
import { metricsRoutes } from './routes/metrics';
import { forkRoutes } from './routes/fork';
import { sessionEventRoutes } from './routes/session-events';
import { sessionStreamRoutes } from './routes/session-stream';
import { sessionRoutes } from './routes/sessions';
import { systemRoutes } from './routes/system';
import { apiSchemas } from './schemas';
import { SessionReader } from './session-reader';
import { StreamHub } from './stream-hub';
import { assertSameStreamStore, StreamStoreError, type StreamStore } from '../streams';
import { temporalCalls } from './temporal-calls';
import { refuseInvalid } from './validation';
import { traceChanges } from './request-tracing';
import type { RequestTracing } from '../tracing';

/** Options of {@link createHttpApp}. */
export interface HttpAppOptions {
  client: SessionClient;
  /** The deployment's policy, for `GET /tool-definition`; without it that endpoint answers 503. */
  policy?: TodoPolicy;
  /** When set, every endpoint but `/healthz` and the dashboard's static files needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Origins allowed by CORS, and so allowed to write from a browser; none (CORS off) by default. */
  corsOrigins?: string[];
  /**
   * More `Host` names to answer to (`host` on any port, or `host:port`) beside the bound address;
   * see {@link AllowedHosts}. Any other `Host` gets 421.
   */
  allowedHosts?: string[];
  /** Largest request body in bytes (default 1 MiB: twice the largest list a write accepts). */
  bodyLimitBytes?: number;
  /**
   * Longest wait for Temporal on one request (default 10 s). Past it the request's Temporal
   * calls are cancelled and it answers 504: `outcome-unknown` for a change (it may still be
   * applied; a write says which `Idempotency-Key` applies it at most once), `session-timeout`
   * for a read of a session, `temporal-unavailable` (503) for the list of sessions.
   */
  temporalTimeoutMs?: number;
  /** Pause between polls of a watched session for the event stream (default 250 ms). */
  pollMs?: number;
  /**
   * Where the service counts what it does (its `todo_write` answers, its requests), served at
   * `GET /metrics`; a registry of its own unless given.
   */
  metrics?: Registry;
  /** This package's version, as the MCP endpoint's `serverInfo` names it. */
  version?: string;
  /** Traces (`startTracing(…)`): a server span for each request that changes something. */
  tracing?: RequestTracing;
  /**
   * `AGENT_SESSIONS_TRACE_URL`: where one trace opens, `{traceId}` standing for its id; the
   * dashboard links each turn that has a trace there (`GET /dashboard-config`).
   */
  traceUrl?: string;
  /**
   * The stream store `GET /sessions/{id}/stream` reads (the one the workers write to: see
   * docs/streaming.md); without it that route answers `problem` events saying so. The caller closes it.
   */
  streamStore?: StreamStore;
  /** The Worker Deployment whose workers' stream store is checked against {@link streamStore} (default: the client's task queue, as workers default it). */
  deployment?: string;
}

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/**
 * The HTTP API and dashboard over a {@link SessionClient}: every session operation, a live
 * event stream per session, the stream of its model's words, the tool definition, and an OpenAPI 3.1 document generated from the
 * very route declarations that validate the requests (`routes/`). Errors are JSON
 * `{ "error": …, "code": … }`, mapped in one place (`http-errors.ts`).
 */
export function createHttpApp(options: HttpAppOptions): { app: OpenAPIHono; reader: SessionReader; hub: StreamHub | undefined; hosts: AllowedHosts; mcp: { close: () => Promise<void> } } {
  const { client } = options;
  const timeout = options.temporalTimeoutMs ?? 10_000;
  const reader = new SessionReader(client, options.pollMs, timeout);
  const store = options.streamStore;
  const hub = store !== undefined ? new StreamHub(store, sameStoreCheck(client, store, options.deployment ?? client.taskQueue)) : undefined;
  const calls = temporalCalls(client, timeout);
  const schemas = apiSchemas();
  const STATIC_FILES = staticFiles();
  const hosts = new AllowedHosts(options.allowedHosts);
  const registry = options.metrics ?? new Registry();
  const metrics = new HttpServiceMetrics(registry);
  // A request that breaks a route's schema gets one sentence and 400, never zod's issue list.
  const app = new OpenAPIHono({ defaultHook: refuseInvalid() });

  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      // Hono's own middleware (bearer auth) throws its finished answer; a bare one gets ours.
      if (error.res !== undefined) return error.getResponse();
      return c.json({ error: error.message, code: error.status === 415 ? 'unsupported-media-type' : 'invalid-input' }, error.status === 415 ? 415 : 400);
    }
    const answer = errorAnswer(error);
    return c.json(answer.body, answer.status);
  });
  // 404 for a path the service does not have, 405 with Allow for a method a path lacks.
  app.notFound(notFoundOrNotAllowed(app));

  // First, so that every answer is timed, the guards' refusals included.
  meterRequests(app, metrics);
  if (options.tracing !== undefined) app.use('*', traceChanges(options.tracing));
  app.use('*', async (c, next) => {
    await next();
    // Untrusted todo text must never become markup or script anywhere this service answers
    // (set after the handler, so refusals that middleware builds get them too).
    c.res.headers.set('X-Content-Type-Options', 'nosniff');
    c.res.headers.set('Referrer-Policy', 'no-referrer');
  });
  const bodyLimitBytes = options.bodyLimitBytes ?? 1024 * 1024;
  guardRequests(app, {
    hosts,
    corsOrigins: options.corsOrigins ?? [],
    token: options.token,
    bodyLimitBytes,
    isPublic: (path) => path === '/healthz' || path in STATIC_FILES,
  });

  for (const [path, file] of Object.entries(STATIC_FILES)) {
    app.get(path, (c) => {
      const body = readFileSync(join(staticDir(), file), 'utf8');
      c.header('Content-Type', CONTENT_TYPES[file.split('.').pop()!]!);
      c.header('Cache-Control', 'no-cache');
      // The page's own <meta> policy, plus what only a header can say: no framing.
      c.header('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'");
      return c.body(body);
    });
  }

  systemRoutes(app, { calls, ping: () => client.temporal.connection.workflowService.getSystemInfo({}), policy: options.policy, schemas, traceUrl: options.traceUrl });
  sessionRoutes(app, { client, reader, calls, schemas, todoWrites: metrics.todoWrites });
  agentRoutes(app, { client, calls, schemas });
  forkRoutes(app, { client, schemas });
  toolRoutes(app, { client, calls, schemas });
  sessionEventRoutes(app, { reader, schemas });
  metricsRoutes(app, registry);
  sessionStreamRoutes(app, { reader, hub, schemas });
  const mcp = mcpRoutes(app, { client, reader, policy: options.policy, corsOrigins: options.corsOrigins ?? [], bodyLimitBytes, schemas, version: options.version ?? '0.0.0' });
  return { app, reader, hub, hosts, mcp };
}

/** Where the dashboard's files are: next to this module in the sources, copied there by the build. */
function staticDir(): string {
  return join(__dirname, 'static');
}

/**
 * The dashboard's files by URL path: `/` and every `.html`, `.js` and `.css` file under the
 * static folder (its ES modules included), listed once when the app is created. Only names of
 * plain path characters are served, so none can be read as a route pattern or climb out.
 */
function staticFiles(): Record<string, string> {
  const files: Record<string, string> = { '/': 'index.html' };
  for (const entry of readdirSync(staticDir(), { recursive: true, encoding: 'utf8' })) {
    const file = entry.split(sep).join('/');
    if (/^[\w-]+(\/[\w-]+)*\.(html|js|css)$/.test(file)) files[`/${file}`] = file;
  }
  return files;
}

/** How long a check that the workers write to this service's stream store holds before it is made again. */
const STORE_CHECK_MS = 30_000;

/**
 * The check a feed makes before it reads a session's stream: that the current version of
 * `deployment` writes to `store` (its workers record their store on the version). A mismatch is
 * the reader's `problem`, naming both stores; Temporal out of reach is no verdict (the words may
 * still come), so it passes.
 */
export function sameStoreCheck(client: SessionClient, store: StreamStore, deployment: string): () => Promise<void> {
  let checked: { at: number; result: Promise<void> } | undefined;
  return () => {
    if (checked === undefined || Date.now() - checked.at > STORE_CHECK_MS) {
      const result = (async () => {
        try {
          await assertSameStreamStore(client.temporal.connection.workflowService, client.temporal.options.namespace, deployment, await store.identity());
        } catch (error) {
          if (error instanceof StreamStoreError) throw error;
        }
      })();
      checked = { at: Date.now(), result };
    }
    return checked.result;
  };
}
