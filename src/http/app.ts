import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { streamSSE } from 'hono/streaming';
import { AgentSessionsError, InvalidInputError, OutcomeUnknownError, SessionTimeoutError, treeJson, type SessionClient } from '../client';
import { foldHistory, runsOf } from '../history/session-history';
import { todoWriteToolDefinition, type TodoPolicy } from '../todo';
import { AllowedHosts } from './allowed-hosts';
import { errorAnswer } from './http-errors';
import { guardRequests } from './request-guards';
import { apiSchemas } from './schemas';
import { SessionReader } from './session-reader';
import { withTimeLimit } from './time-limit';

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
}

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/**
 * The HTTP API and dashboard over a {@link SessionClient}: every session operation, a live
 * event stream per session, the tool definition, and an OpenAPI 3.1 document generated from
 * the same zod schemas the workflow validates with. Errors are JSON `{ "error": … }`.
 */
export function createHttpApp(options: HttpAppOptions): { app: OpenAPIHono; reader: SessionReader; hosts: AllowedHosts } {
  const { client } = options;
  const timeout = options.temporalTimeoutMs ?? 10_000;
  const reader = new SessionReader(client, options.pollMs, timeout);
  const schemas = apiSchemas();
  const STATIC_FILES = staticFiles();
  const hosts = new AllowedHosts(options.allowedHosts);
  const app = new OpenAPIHono();
  const connection = client.temporal.connection;
  // What a request that got no answer in time says: a change may still be applied, a read changed nothing.
  const change = <T>(sessionId: string, call: () => Promise<T>, updateId?: string): Promise<T> =>
    withTimeLimit(connection, timeout, call, () => new OutcomeUnknownError(sessionId, updateId, timeout));
  const read = <T>(sessionId: string, call: () => Promise<T>): Promise<T> =>
    withTimeLimit(connection, timeout, call, () => new SessionTimeoutError(sessionId));
  const listing = <T>(call: () => Promise<T>): Promise<T> =>
    withTimeLimit(connection, timeout, call, () => new AgentSessionsError('temporal-unavailable', `Temporal did not answer within ${timeout} ms; nothing was changed, try again shortly`));

  app.onError((error, c) => {
    // Hono's own middleware (bearer auth) throws its finished answer.
    if (error instanceof HTTPException) return error.getResponse();
    const answer = errorAnswer(error);
    return c.json(answer.body, answer.status);
  });
  app.notFound((c) => c.json({ error: `no such endpoint: ${c.req.method} ${c.req.path}`, code: 'no-such-endpoint' }, 404));

  app.use('*', async (c, next) => {
    await next();
    // Untrusted todo text must never become markup or script anywhere this service answers
    // (set after the handler, so refusals that middleware builds get them too).
    c.res.headers.set('X-Content-Type-Options', 'nosniff');
    c.res.headers.set('Referrer-Policy', 'no-referrer');
  });
  guardRequests(app, {
    hosts,
    corsOrigins: options.corsOrigins ?? [],
    token: options.token,
    bodyLimitBytes: options.bodyLimitBytes ?? 1024 * 1024,
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

  app.get('/healthz', async (c) => {
    const reachable = await listing(() => connection.workflowService.getSystemInfo({})).then(
      () => true,
      () => false,
    );
    return c.json({ ok: reachable, temporal: reachable ? 'reachable' : 'unreachable' }, reachable ? 200 : 503);
  });
  app.get('/auth', (c) => c.body(null, 204));
  app.get('/tool-definition', (c) => {
    if (options.policy === undefined) {
      return c.json({ error: 'this service was started without a policy: pass --allow-parallel-in-progress or set ALLOW_PARALLEL_IN_PROGRESS', code: 'invalid-setting' }, 503);
    }
    return c.json(todoWriteToolDefinition(options.policy));
  });

  app.get('/sessions', async (c) => c.json(await listing(() => client.list({ open: c.req.query('open') === 'true' }))));
  app.post('/sessions', async (c) => {
    const body = await jsonBody(c);
    const parsed = schemas.start.safeParse(body);
    if (!parsed.success) throw new InvalidInputError('the body must be {"id": "<session id>", "task": "<optional text>"}');
    const { id, task } = parsed.data;
    const result = await change(id, () => client.start(id, task !== undefined ? { task } : {}));
    return c.json(result, result.created ? 201 : 200);
  });
  app.get('/sessions/:id', async (c) => {
    const snapshot = await reader.read(c.req.param('id'));
    c.header('ETag', `"${snapshot.version}"`);
    return c.json(snapshot);
  });
  app.get('/sessions/:id/todos', async (c) => c.json((await reader.read(c.req.param('id'))).todos));
  app.get('/sessions/:id/tree', async (c) => c.json(treeJson(await read(c.req.param('id'), () => client.tree(c.req.param('id'))))));
  app.get('/sessions/:id/history', async (c) => c.json(await read(c.req.param('id'), () => client.exportHistory(c.req.param('id')))));
  app.get('/sessions/:id/timeline', async (c) => {
    const history = await read(c.req.param('id'), () => client.exportHistory(c.req.param('id')));
    const { steps } = foldHistory(runsOf(history), c.req.param('id'));
    return c.json({
      steps: steps.map(({ eventId, time, event, run, state }) => ({
        eventId,
        time: time ?? null,
        type: event.type,
        run,
        todos: state.todos,
        version: state.version,
        turn: state.turn,
        turnOpen: state.turnOpen,
      })),
    });
  });
  app.post('/sessions/:id/todo_write', async (c) => {
    const body = await jsonBody(c);
    const sessionId = c.req.param('id');
    // Chosen here, not in the client, so that an answer that never came can still name it.
    const updateId = c.req.header('Idempotency-Key') || randomUUID();
    const expectedVersion = ifMatchVersion(c.req.header('If-Match'));
    const result = await change(
      sessionId,
      () => client.todoWrite(sessionId, body, { updateId, ...(expectedVersion !== undefined ? { expectedVersion } : {}) }),
      updateId,
    );
    c.header('ETag', `"${result.version}"`);
    return c.json(result);
  });
  app.post('/sessions/:id/turn/start', async (c) => {
    await change(c.req.param('id'), () => client.turnStart(c.req.param('id')));
    return c.json({ accepted: true }, 202);
  });
  app.post('/sessions/:id/turn/end', async (c) => {
    await change(c.req.param('id'), () => client.turnEnd(c.req.param('id')));
    return c.json({ accepted: true }, 202);
  });
  app.post('/sessions/:id/close', async (c) => c.json(await change(c.req.param('id'), () => client.close(c.req.param('id')))));
  app.post('/sessions/:id/subagents', async (c) => {
    const body = await jsonBody(c);
    const parsed = schemas.spawn.safeParse(body);
    if (!parsed.success) throw new InvalidInputError('the body must be {"name": "<subagent name>", "task": "<optional text>"}');
    return c.json(await change(c.req.param('id'), () => client.spawnSubagent(c.req.param('id'), parsed.data as { name: string; task?: string })), 201);
  });
  app.get('/sessions/:id/events', async (c) => {
    const sessionId = c.req.param('id');
    await reader.read(sessionId); // 404 / 503 / 504 before the stream starts
    return streamSSE(c, async (stream) => {
      let queue = Promise.resolve();
      const unwatch = reader.watch(
        sessionId,
        (snapshot) => {
          queue = queue.then(() => stream.writeSSE({ event: 'session', id: String(snapshot.version), data: JSON.stringify(snapshot) }));
        },
        (error) => {
          queue = queue.then(() => stream.writeSSE({ event: 'problem', data: JSON.stringify(errorAnswer(error).body) }));
        },
      );
      await new Promise<void>((resolve) => stream.onAbort(resolve));
      unwatch();
    });
  });

  documentRoutes(app, schemas);
  app.get('/openapi.json', (c) =>
    c.json(
      app.getOpenAPI31Document({
        openapi: '3.1.0',
        info: {
          title: 'agent-sessions',
          version: '0.1.0',
          description: 'Durable AI-agent sessions on Temporal: todo lists written with todo_write, turns, subagents, live state.',
        },
      }),
    ),
  );
  return { app, reader, hosts };
}

async function jsonBody(c: Context): Promise<unknown> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await c.req.arrayBuffer());
  } catch {
    // Never silently replaced with U+FFFD: the stored list must be what was sent.
    throw new InvalidInputError('the request body is not valid JSON: it is not UTF-8 text');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`the request body is not valid JSON (${(error as Error).message})`);
  }
}

function ifMatchVersion(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const raw = header.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
  const version = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(version)) throw new InvalidInputError(`If-Match must be a session version such as "3", got ${JSON.stringify(header)}`);
  return version;
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

function documentRoutes(app: OpenAPIHono, s: ReturnType<typeof apiSchemas>): void {
  const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
  const errors = {
    400: json(s.error, 'Malformed request'),
    401: json(s.error, 'Missing or wrong bearer token'),
    404: json(s.error, 'No such session'),
    503: json(s.error, 'Temporal is unreachable'),
  };
  const id = z.object({ id: z.string().openapi({ description: 'Session id (URL-encoded: child ids contain "/")', example: 'build-42' }) });
  const doc = (method: 'get' | 'post', path: string, summary: string, responses: Record<number, unknown>, request: Record<string, unknown> = {}) =>
    app.openAPIRegistry.registerPath({ method, path, summary, request, responses: { ...errors, ...responses } as never });
  const body = (schema: z.ZodType) => ({ body: { required: true, content: { 'application/json': { schema } } } });

  doc('get', '/healthz', 'Whether the service and Temporal answer (no token needed)', { 200: json(z.object({ ok: z.boolean(), temporal: z.string() }), 'Healthy') });
  doc('get', '/tool-definition', "The todo_write function definition under this deployment's policy", { 200: json(z.object({}).passthrough(), 'OpenAI-compatible function tool') });
  doc('get', '/sessions', 'List sessions (newest first); ?open=true for running ones', { 200: json(z.array(s.listing), 'Sessions') }, { query: z.object({ open: z.enum(['true', 'false']).optional() }) });
  doc('post', '/sessions', 'Start a session (idempotent: 200 when it already runs)', { 201: json(s.started, 'Started'), 200: json(s.started, 'Already running'), 409: json(s.error, 'Closed: ids are not reused') }, body(s.start));
  doc('get', '/sessions/{id}', 'The session query: turn, list, counts, version, parent, children (ETag: version)', { 200: json(s.session, 'Session') }, { params: id });
  doc('get', '/sessions/{id}/todos', 'The current list, or null', { 200: json(s.todoList, 'List') }, { params: id });
  doc('get', '/sessions/{id}/tree', 'The session and its subagents, recursively', { 200: json(s.tree, 'Tree') }, { params: id });
  doc('get', '/sessions/{id}/history', 'The history: `temporal workflow show --output json` format, or {sessionId, runs:[…]} after continue-as-new', { 200: json(z.object({}).passthrough(), 'History') }, { params: id });
  doc('get', '/sessions/{id}/timeline', 'The state after each event of the history (time travel)', { 200: json(s.timeline, 'Timeline') }, { params: id });
  doc(
    'post',
    '/sessions/{id}/todo_write',
    'Replace the list (creates the session if needed). Idempotency-Key → update id; If-Match: <version> → expected version',
    { 200: json(s.writeResult, 'Accepted'), 409: json(s.error, 'Session closed'), 412: json(s.error, 'Stale If-Match version'), 413: json(s.error, 'Body too large'), 422: json(s.error, 'Rejected: the message names the rule') },
    { params: id, headers: z.object({ 'Idempotency-Key': z.string().optional(), 'If-Match': z.string().optional() }), ...body(s.todoWrite) },
  );
  doc('post', '/sessions/{id}/turn/start', 'Start a turn (the list is cleared)', { 202: json(z.object({ accepted: z.boolean() }), 'Sent') }, { params: id });
  doc('post', '/sessions/{id}/turn/end', 'End the turn (the list stays)', { 202: json(z.object({ accepted: z.boolean() }), 'Sent') }, { params: id });
  doc('post', '/sessions/{id}/close', 'Close the session and its open subagents', { 200: json(s.session, 'Final state') }, { params: id });
  doc('post', '/sessions/{id}/subagents', 'Spawn a subagent as a child session', { 201: json(s.spawned, 'Spawned'), 422: json(s.error, 'Bad or taken name') }, { params: id, ...body(s.spawn) });
  doc('get', '/sessions/{id}/events', 'Server-Sent Events: event "session" with the session JSON on connect and on every version change', { 200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: z.string() } } } }, { params: id });
}
