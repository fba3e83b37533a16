import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { SessionClient } from '../../client';
import { strictJsonBody } from '../json-body';
import type { TemporalCalls } from '../temporal-calls';
import { refuseInvalid } from '../validation';
import { errorResponses, GUARDED, json, SESSION, sessionIdParam as params, WRITE, type ApiSchemas } from './route-docs';

/** What the tool routes need. */
export interface ToolRoutes {
  client: SessionClient;
  calls: TemporalCalls;
  schemas: ApiSchemas;
}

/**
 * `POST /sessions/{id}/tools/accept`: trust the new definitions of the tools a session withholds
 * because they changed after it first offered them (the `tool/accept` update, as
 * `agent-sessions tools accept` sends it). Refused with 422 `no-withheld-tool` for a name that is
 * not withheld, or when none is.
 */
export function toolRoutes(app: OpenAPIHono, { client, calls, schemas: s }: ToolRoutes): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/sessions/{id}/tools/accept',
      summary: 'Trust the changed definitions of withheld tools (body {"names": [...]}, or {} for every one): offered again from the next turn',
      middleware: [strictJsonBody],
      request: { params, body: { required: true, content: { 'application/json': { schema: s.toolAccept } } } },
      responses: {
        ...errorResponses(s, [...GUARDED, ...WRITE, ...SESSION, 409, 422], { 422: 'Refused (rejected): rule no-withheld-tool (the name is not withheld, or none is)' }),
        200: json(s.toolAcceptResult, 'Accepted'),
      },
    }),
    async (c) => {
      const id = c.req.valid('param').id;
      const { names } = c.req.valid('json');
      return c.json(await calls.change(id, () => client.acceptTools(id, names)), 200);
    },
    refuseInvalid('the body must be {"names": ["<withheld tool>", ...]} or {} for every withheld tool') as never,
  );
}
