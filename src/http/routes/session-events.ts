import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { errorAnswer } from '../http-errors';
import type { SessionReader } from '../session-reader';
import { errorResponses, GUARDED, SESSION, sessionIdParam as params, type ApiSchemas } from './route-docs';

/**
 * `GET /sessions/{id}/events`: Server-Sent Events, an event `session` with the session JSON on
 * connect and on every change (of version, of the agent's revision as a turn runs, of the
 * ignored signals; id: the version), and `problem` with an error body
 * while the session cannot be read; the stream goes on until the client leaves.
 */
export function sessionEventRoutes(app: OpenAPIHono, { reader, schemas: s }: { reader: SessionReader; schemas: ApiSchemas }): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/sessions/{id}/events',
      summary: 'Server-Sent Events: event "session" with the session JSON on connect and on every change (version, agent.revision as a turn runs)',
      request: { params },
      // OpenAPI 3.1 gives an event stream's schema as the schema of one event.
      responses: {...errorResponses(s, [...GUARDED, ...SESSION]), 200: { description: 'Server-Sent Events, one per change', content: { 'text/event-stream': { schema: s.sessionEvent } } } },
    }),
    async (c) => {
      const sessionId = c.req.valid('param').id;
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
    },
  );
}
