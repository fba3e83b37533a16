import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { createMcpHandler, type McpHttpHandler, type ServerEvent, type ServerEventBus } from '@modelcontextprotocol/server';
import type { SessionClient } from '../../client';
import { createSessionMcpServer } from '../../mcp/session-mcp-server';
import { todosResourceUri } from '../../mcp/session-tools';
import { ListChanges } from '../../mcp/session-watch';
import type { TodoPolicy } from '../../todo';
import { HttpRefusal } from '../http-errors';
import type { SessionReader } from '../session-reader';
import { json, sessionIdParam as params, type ApiSchemas } from './route-docs';

/** What the MCP endpoint needs. */
export interface McpRoutes {
  client: SessionClient;
  /** Shares one poll per watched session among the listeners of its list. */
  reader: SessionReader;
  /** The deployment's policy, which words `todo_write`'s description; without it the endpoint answers 503. */
  policy: TodoPolicy | undefined;
  /** Origins allowed beside the service's own (`AGENT_SESSIONS_CORS_ORIGINS`). */
  corsOrigins: readonly string[];
  /** Largest request body in bytes, as the service's own limit. */
  bodyLimitBytes: number;
  schemas: ApiSchemas;
  /** This package's version, as `serverInfo` names it. */
  version: string;
}

/** Session handlers kept for reuse: each is small, and a session's readers come back to it. */
const KEPT_HANDLERS = 256;

/**
 * `/sessions/{id}/mcp`: the session served over MCP's Streamable HTTP transport (the tools
 * `todo_write` and `todo_read`, the list as the resource `session://<id>/todos`), through the
 * SDK's `createMcpHandler`, which serves the 2026-07-28 protocol and, statelessly, the 2025
 * protocols the agent CLIs speak today.
 *
 * Security: behind the service's own checks (the `Host` allow-list against DNS rebinding, the
 * bearer token, the body limit, JSON only), and, as MCP's transport rules ask, an `Origin` that
 * is not the service's own or a configured one is refused with 403 on every method, reads too.
 *
 * Changes reach a 2026-07-28 client's `subscriptions/listen` stream from whichever client wrote:
 * while one listens, the session is watched (one shared poll per session); writes made here are
 * told at once.
 */
export function mcpRoutes(app: OpenAPIHono, options: McpRoutes): { close: () => Promise<void> } {
  const { client, reader, policy, corsOrigins } = options;
  const changes = new Map<string, ListChanges>();
  const handlers = new Map<string, McpHttpHandler>();

  /** The changes of one session's list, while anyone listens to them. */
  const changesOf = (sessionId: string): ListChanges => {
    let found = changes.get(sessionId);
    if (found === undefined) {
      found = new ListChanges((listener, onError) => reader.watch(sessionId, listener, onError));
      changes.set(sessionId, found);
    }
    return found;
  };

  const handlerOf = (sessionId: string, active: TodoPolicy): McpHttpHandler => {
    let handler = handlers.get(sessionId);
    if (handler !== undefined) {
      // Most recently used last, so the first is the one to let go.
      handlers.delete(sessionId);
      handlers.set(sessionId, handler);
      return handler;
    }
    const session = {
      write: async (args: unknown) => {
        const result = await client.todoWrite(sessionId, args);
        changes.get(sessionId)?.written(result.version);
        return result;
      },
      read: () => reader.read(sessionId),
    };
    handler = createMcpHandler(
      ({ era }) =>
        createSessionMcpServer({
          sessionId,
          policy: active,
          version: options.version,
          session,
          // The 2025 protocol is served statelessly here: a request at a time, no stream to notify on.
          ...(era === 'modern' ? { subscriptions: 'listen' as const } : {}),
          onInternalError: (error) => process.stderr.write(`agent-sessions serve: MCP ${sessionId}: ${error instanceof Error ? error.message : String(error)}\n`),
        }),
      { bus: sessionBus(sessionId, () => changesOf(sessionId), () => changes.delete(sessionId)), maxRequestBodySize: options.bodyLimitBytes },
    );
    handlers.set(sessionId, handler);
    if (handlers.size > KEPT_HANDLERS) handlers.delete(handlers.keys().next().value!);
    return handler;
  };

  app.use('/sessions/:id/mcp', async (c, next) => {
    // MCP's transport rules: a present Origin must be ours or a configured one, on every
    // method (a page must not even open a stream); clients that are no browser send none.
    const origin = c.req.header('Origin');
    if (origin !== undefined && origin !== new URL(c.req.url).origin && !corsOrigins.includes(origin)) {
      throw new HttpRefusal(403, 'forbidden-origin', `a page of ${origin} may not use this session's MCP endpoint: only this service's own pages and the origins listed in AGENT_SESSIONS_CORS_ORIGINS may`);
    }
    await next();
  });

  // JSON-RPC 2.0 as MCP's transport reads it: a request, a notification, or a response to a
  // request of the server's (batches are not part of the protocol since 2025-06-18).
  // A JSON number the validator reads as an integer is a safe one: the document says so.
  const integer = () => z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);
  const requestId = z.union([z.string(), integer()]);
  const jsonRpcParams = z.record(z.string(), z.unknown()).optional();
  const jsonRpcMessage = z
    .union([
      z.object({ jsonrpc: z.literal('2.0'), id: requestId, method: z.string().min(1), params: jsonRpcParams }).openapi({ title: 'request' }),
      z.object({ jsonrpc: z.literal('2.0'), method: z.string().min(1), params: jsonRpcParams }).openapi({ title: 'notification' }),
      z.object({ jsonrpc: z.literal('2.0'), id: requestId, result: z.record(z.string(), z.unknown()) }).openapi({ title: 'result' }),
      z.object({ jsonrpc: z.literal('2.0'), id: requestId, error: z.object({ code: integer(), message: z.string() }) }).openapi({ title: 'error' }),
    ])
    .openapi('JsonRpcMessage');
  const jsonRpcError = z
    .object({
      jsonrpc: z.literal('2.0'),
      id: z.union([z.string(), z.number(), z.null()]),
      error: z.object({ code: integer(), message: z.string() }).passthrough(),
    })
    .openapi('JsonRpcError');
  // One event of the answer's stream, as a reader parses it: a JSON-RPC message (the answer, or a
  // notification sent before it) as JSON text.
  const mcpEvent = z
    .object({
      event: z.literal('message'),
      data: z.string().meta({ description: 'A JSON-RPC message', contentMediaType: 'application/json', contentSchema: { $ref: '#/components/schemas/JsonRpcMessage' } }),
      id: z.string().optional(),
    })
    .strict()
    .openapi('McpEvent');
  app.openapi(
    createRoute({
      method: 'post',
      path: '/sessions/{id}/mcp',
      summary:
        "The session over MCP's Streamable HTTP transport: one JSON-RPC message per request (tools todo_write and todo_read, " +
        'the resource session://{id}/todos). Protocol 2026-07-28, and 2025-11-25, 2025-06-18 and 2025-03-26 statelessly. ' +
        'Send Accept: application/json, text/event-stream',
      request: {
        params,
        body: {
          required: true,
          content: { 'application/json': { schema: jsonRpcMessage } },
        },
      },
      responses: {
        200: {
          description: 'The JSON-RPC answer, as JSON or as a stream of Server-Sent Events',
          content: { 'application/json': { schema: z.object({ jsonrpc: z.literal('2.0') }).passthrough() }, 'text/event-stream': { schema: mcpEvent } },
        },
        202: { description: 'A notification or a response, accepted' },
        400: {
          description: 'Not a JSON-RPC message (a JSON-RPC error from the MCP transport), or not an object (the service\'s own error)',
          content: { 'application/json': { schema: z.union([jsonRpcError, options.schemas.error]) } },
        },
        401: json(options.schemas.error, 'Missing or wrong bearer token'),
        403: json(options.schemas.error, 'An Origin that is neither this service nor a configured one'),
        406: json(jsonRpcError, 'The Accept header does not take both application/json and text/event-stream'),
        413: json(options.schemas.error, 'Body larger than the limit'),
        415: json(options.schemas.error, 'Body not JSON'),
        421: json(options.schemas.error, 'A Host this service does not answer to'),
        503: json(options.schemas.error, 'The service was started without a policy'),
      },
    }),
    async (c) => {
      if (policy === undefined) {
        return c.json({ error: 'this service was started without a policy: pass --allow-parallel-in-progress or set ALLOW_PARALLEL_IN_PROGRESS to serve sessions over MCP', code: 'invalid-setting' as const }, 503);
      }
      const sessionId = c.req.valid('param').id;
      const response = await handlerOf(sessionId, policy).fetch(c.req.raw, { parsedBody: c.req.valid('json') });
      return response as never;
    },
  );

  return { close: async () => void (await Promise.allSettled([...handlers.values()].map((handler) => handler.close()))) };
}

/**
 * The change-event bus of one session's handler: each open `subscriptions/listen` stream is a
 * listener of the session's {@link ListChanges}, told `resource_updated` for its list's URI (the
 * SDK's router delivers it to the streams whose filter asked for that URI).
 */
function sessionBus(sessionId: string, changes: () => ListChanges, forget: () => void): ServerEventBus {
  const uri = todosResourceUri(sessionId);
  const listeners = new Set<(event: ServerEvent) => void>();
  return {
    publish: (event) => {
      for (const listener of [...listeners]) listener(event);
    },
    subscribe: (listener) => {
      listeners.add(listener);
      const session = changes();
      const stop = session.listen(() => listener({ kind: 'resource_updated', uri }));
      let stopped = false;
      return () => {
        if (stopped) return;
        stopped = true;
        listeners.delete(listener);
        stop();
        if (session.size === 0) forget();
      };
    },
  };
}
