import { randomUUID } from 'node:crypto';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { InvalidInputError, TREE_PAGE_LIMIT, treeJson, type SessionClient } from '../../client';
import { foldHistory } from '../../history/session-history';
import { SEARCHABLE_PATTERN } from '../../session';
import type { TodoWriteMetrics } from '../../metrics';
import { readJsonBody, strictJsonBody } from '../json-body';
import type { SessionReader } from '../session-reader';
import type { TemporalCalls } from '../temporal-calls';
import { refuseInvalid } from '../validation';
import { errorResponses, GUARDED, json, SESSION, sessionIdParam as params, WRITE, type ApiSchemas } from './route-docs';

/** What the session routes need. */
export interface SessionRoutes {
  client: SessionClient;
  /** Shares one query per session among concurrent readers. */
  reader: SessionReader;
  calls: TemporalCalls;
  schemas: ApiSchemas;
  /** Counts the answers to the service's own writes. */
  todoWrites: TodoWriteMetrics;
}

/**
 * Every operation on sessions: list and start them, read one (state, list, tree, history,
 * timeline), write its list, start and end turns, spawn subagents, close it. Each route is
 * declared once: the declaration validates the request and documents it.
 */
export function sessionRoutes(app: OpenAPIHono, { client, reader, calls, schemas: s, todoWrites }: SessionRoutes): void {
  const reads = errorResponses(s, [...GUARDED, ...SESSION]);
  const accepted = json(z.object({ accepted: z.boolean() }), 'Sent');

  app.openapi(
    createRoute({
      method: 'get',
      path: '/sessions',
      summary:
        'List sessions (newest first), one page of at most ?limit= (default 100); the next page is ?pageToken= the X-Next-Page-Token header. ' +
        '?open=true for running ones, ?parent=<id> for its subagents, ?inProgress=true for those with a todo in progress',
      // Any other value of the flags reads as false, as ?open always has: documented so, not refused.
      request: {
        query: z.object({
          open: z.string().optional().openapi({ description: 'true: only running sessions; any other value: all', example: 'true' }),
          inProgress: z.string().optional().openapi({ description: 'true: only sessions with a todo in progress; any other value: all', example: 'true' }),
          parent: z.string().min(1).optional().openapi({ description: 'A session id: only its subagents are listed', pattern: SEARCHABLE_PATTERN }),
          limit: z.coerce.number().int().min(1).max(1000).optional(),
          pageToken: z
            .string()
            .min(1)
            .max(4096)
            .optional()
            .openapi({ description: 'The X-Next-Page-Token of the previous page, with the same filters: a token the listing did not give is refused (400)' }),
        }),
      },
      responses: {
        ...errorResponses(s, [...GUARDED, 503], { 503: 'Temporal is unreachable, or did not answer in time (temporal-unavailable)' }),
        200: {
          description: 'Sessions',
          headers: z.object({ 'X-Next-Page-Token': z.string().optional().openapi({ description: 'Where the next page starts; absent after the last page.' }) }),
          content: { 'application/json': { schema: z.array(s.listing) } },
        },
      },
    }),
    async (c) => {
      const { open, inProgress, parent, limit, pageToken } = c.req.valid('query');
      const page = await calls.listing(() =>
        client.listPage({
          open: open === 'true',
          inProgress: inProgress === 'true',
          limit: limit ?? 100,
          ...(parent !== undefined ? { parent } : {}),
          ...(pageToken !== undefined ? { pageToken } : {}),
        }),
      );
      if (page.nextPageToken !== null) c.header('X-Next-Page-Token', page.nextPageToken);
      return c.json(page.sessions, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/sessions',
      summary: 'Start a session (idempotent: 200 when it already runs)',
      middleware: [strictJsonBody],
      request: { body: { required: true, content: { 'application/json': { schema: s.start } } } },
      responses: {
        ...errorResponses(s, [...GUARDED, ...WRITE, 409, 502, 503, 504], { 409: 'A session with that id was closed (session-closed): ids are not reused' }),
        201: json(s.started, 'Started'),
        200: json(s.started, 'Already running'),
      },
    }),
    async (c) => {
      const { id, task } = c.req.valid('json');
      const result = await calls.change(id, () => client.start(id, task !== undefined ? { task } : {}));
      return result.created ? c.json(result, 201) : c.json(result, 200);
    },
    // A route's own hook is typed for any route; `never` keeps it out of the handler's type inference.
    refuseInvalid('the body must be {"id": "<session id>", "task": "<optional text>"}') as never,
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/sessions/{id}',
      summary: 'The session query: turn, list, counts, version, parent, children (ETag: version)',
      request: { params },
      responses: { ...reads, 200: json(s.session, 'Session') },
    }),
    async (c) => {
      const snapshot = await reader.read(c.req.valid('param').id);
      c.header('ETag', `"${snapshot.version}"`);
      return c.json(snapshot, 200);
    },
  );

  app.openapi(
    createRoute({ method: 'get', path: '/sessions/{id}/todos', summary: 'The current list, or null', request: { params }, responses: { ...reads, 200: json(s.todoList, 'List') } }),
    async (c) => c.json((await reader.read(c.req.valid('param').id)).todos, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/sessions/{id}/tree',
      summary:
        'The session and its subagents, recursively: the session read whole, each subagent summarized from its search attributes (one visibility call per level). ' +
        "?full=true reads every subagent's list too; ?limit= gives one page of the session's subagents, and the next is ?pageToken= the JSON's nextPageToken",
      request: {
        params,
        query: z.object({
          full: z.enum(['true', 'false']).optional(),
          limit: z.coerce.number().int().min(1).max(TREE_PAGE_LIMIT).optional(),
          pageToken: z
            .string()
            .min(1)
            .max(4096)
            .optional()
            .openapi({ description: "The nextPageToken of the previous page of this session's tree: a token the tree did not give is refused (400)" }),
        }),
      },
      responses: { ...reads, 200: json(s.tree, 'Tree') },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { full, limit, pageToken } = c.req.valid('query');
      const options = { full: full === 'true', ...(limit !== undefined ? { limit } : {}), ...(pageToken !== undefined ? { pageToken } : {}) };
      // The document describes the children one level deep (a SessionTree, recursively); the
      // JSON typing cannot follow the recursion, so the tree is given the documented type.
      return c.json(treeJson(await calls.read(id, () => client.tree(id, options))) as unknown as z.infer<ApiSchemas['tree']>, 200);
    },
    refuseInvalid(
      `the query must be ?full=true|false, ?limit=<an integer from 1 to ${TREE_PAGE_LIMIT}> and ?pageToken=<the nextPageToken of the previous page>, each optional`,
    ) as never,
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/sessions/{id}/history',
      summary: 'The history: `temporal workflow show --output json` format, or {sessionId, runs:[…]} after continue-as-new',
      request: { params },
      responses: { ...reads, 200: json(z.object({}).passthrough(), 'History') },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      return c.json(await calls.read(id, () => client.exportHistory(id)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/sessions/{id}/timeline',
      summary: 'The state after each event of the history (time travel)',
      request: { params },
      responses: { ...reads, 200: json(s.timeline, 'Timeline') },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const runs = await calls.read(id, () => client.historyRuns(id));
      const { steps } = foldHistory(
        runs.map((r) => r.history),
        id,
      );
      return c.json(
        {
          steps: steps.map(({ eventId, time, event, run, state }) => ({
            eventId,
            time: time ?? null,
            type: event.type,
            run,
            runId: runs[run - 1]!.runId,
            todos: state.todos,
            version: state.version,
            turn: state.turn,
            turnOpen: state.turnOpen,
          })),
        },
        200,
      );
    },
  );

  // The body is documented with the workflow's own schema but not validated against it here: the
  // session's validator judges every write (422 with the rule, `shape` included), whoever sends
  // it, and a refused write leaves nothing in history. Only JSON-ness is checked on the way in.
  app.openAPIRegistry.register('TodoWriteArgs', s.todoWrite);
  app.openapi(
    createRoute({
      method: 'post',
      path: '/sessions/{id}/todo_write',
      summary: 'Replace the list (creates the session if needed). Idempotency-Key → update id; If-Match: <version> → expected version',
      request: {
        params,
        headers: z.object({
          'Idempotency-Key': z.string().optional().openapi({ description: 'The update id: the same key applies the write at most once, and answers the same' }),
          'If-Match': z
            .string()
            .optional()
            .openapi({ description: 'The version the write is based on (3, "3" or W/"3"): refused with 412 unless the session is still at it', example: '"3"', pattern: IF_MATCH_PATTERN }),
        }),
        body: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/TodoWriteArgs' } } } },
      },
      responses: {
        ...errorResponses(s, [...GUARDED, ...WRITE, ...SESSION, 409, 412, 422], {
          404: 'No such subagent (session-not-found): a top-level session is created by its first write',
          422: 'Refused (rejected): rule names the first rule the list breaks (duplicate-content, parallel-in-progress, list-too-large, …)',
        }),
        200: json(s.writeResult, 'Accepted'),
      },
    }),
    async (c) => {
      const body = await readJsonBody(c);
      const { id } = c.req.valid('param');
      const headers = c.req.valid('header');
      // Chosen here, not in the client, so that an answer that never came can still name it.
      const updateId = headers['Idempotency-Key'] || randomUUID();
      const expectedVersion = ifMatchVersion(headers['If-Match']);
      const result = await todoWrites.count(updateId, () =>
        calls.change(id, () => client.todoWrite(id, body, { updateId, ...(expectedVersion !== undefined ? { expectedVersion } : {}) }), updateId),
      );
      c.header('ETag', `"${result.version}"`);
      return c.json(result, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/sessions/{id}/turn/start',
      summary: 'Start a turn (the list is cleared)',
      request: { params },
      responses: { ...errorResponses(s, [...GUARDED, ...WRITE, ...SESSION, 409]), 202: accepted },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      await calls.change(id, () => client.turnStart(id));
      return c.json({ accepted: true }, 202);
    },
  );

  app.openapi(
    createRoute({ method: 'post', path: '/sessions/{id}/turn/end', summary: 'End the turn (the list stays)', request: { params }, responses: { ...errorResponses(s, [...GUARDED, ...WRITE, ...SESSION, 409]), 202: accepted } }),
    async (c) => {
      const { id } = c.req.valid('param');
      await calls.change(id, () => client.turnEnd(id));
      return c.json({ accepted: true }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/sessions/{id}/close',
      summary: 'Close the session and its open subagents',
      request: { params },
      // Closing a closed session answers its state again: no 409.
      responses: { ...errorResponses(s, [...GUARDED, ...WRITE, ...SESSION]), 200: json(s.session, 'Final state') },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      return c.json(await calls.change(id, () => client.close(id)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/sessions/{id}/subagents',
      summary: 'Spawn a subagent as a child session',
      middleware: [strictJsonBody],
      request: { params, body: { required: true, content: { 'application/json': { schema: s.spawn } } } },
      responses: {
        ...errorResponses(s, [...GUARDED, ...WRITE, ...SESSION, 409, 422], {
          422: 'Refused (rejected): rule subagent-name (a name or task the schema does not allow), subagent-exists or subagent-id-taken (the name is taken)',
        }),
        201: json(s.spawned, 'Spawned'),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { name, task } = c.req.valid('json');
      return c.json(await calls.change(id, () => client.spawnSubagent(id, { name, ...(task !== undefined ? { task } : {}) })), 201);
    },
    refuseInvalid('the body must be {"name": "<subagent name>", "task": "<optional text>"}') as never,
  );
}

/**
 * What an `If-Match` header may hold: a session version, bare or as an entity tag (`3`, `"3"`,
 * `W/"3"`), as a JSON Schema `pattern` (ECMAScript and Python read it alike). The document states
 * it, and {@link ifMatchVersion} reads the header with it.
 */
const IF_MATCH_PATTERN = '^(?:W/)?(?:"([0-9]{1,15})"|([0-9]{1,15}))$';
const IF_MATCH = new RegExp(IF_MATCH_PATTERN);

/**
 * The expected version an `If-Match` header names, if one was sent.
 *
 * @throws InvalidInputError when it is not a version as {@link IF_MATCH_PATTERN} says (400).
 */
function ifMatchVersion(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const match = IF_MATCH.exec(header.trim());
  if (match === null) throw new InvalidInputError(`If-Match must be a session version such as "3", got ${JSON.stringify(header)}`);
  return Number(match[1] ?? match[2]);
}
