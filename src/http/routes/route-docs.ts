import { z } from '@hono/zod-openapi';
import type { apiSchemas } from '../schemas';

/** The schemas of the API, once per app. */
export type ApiSchemas = ReturnType<typeof apiSchemas>;

/** A JSON response of the document. */
export function json<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

/** The error answers every session route documents, beside its own. */
export function commonErrors(s: ApiSchemas) {
  return {
    400: json(s.error, 'Malformed request'),
    401: json(s.error, 'Missing or wrong bearer token'),
    404: json(s.error, 'No such session'),
    503: json(s.error, 'Temporal is unreachable'),
  };
}

/** The `{id}` path parameter: a session id, URL-encoded (a subagent's id holds "/"). */
export const sessionIdParam = z.object({
  id: z.string().openapi({ description: 'Session id (URL-encoded: child ids contain "/")', example: 'build-42' }),
});
