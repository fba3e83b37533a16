import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { todoWriteToolDefinition, type TodoPolicy } from '../../todo';
import type { TemporalCalls } from '../temporal-calls';
import { errorResponses, GUARDED, json, type ApiSchemas } from './route-docs';

/** What the service's own routes need. */
export interface SystemRoutes {
  calls: TemporalCalls;
  /** Reaches Temporal itself, for the health check. */
  ping: () => Promise<unknown>;
  policy: TodoPolicy | undefined;
  schemas: ApiSchemas;
  /** `AGENT_SESSIONS_TRACE_URL`, for the dashboard's links to traces. */
  traceUrl?: string | undefined;
}

/**
 * The routes about the service rather than a session: `GET /healthz` (no token needed),
 * `GET /tool-definition`, `GET /auth` (whether the token is accepted, for the dashboard) and
 * `GET /openapi.json`, the document every route of the app is declared into.
 */
export function systemRoutes(app: OpenAPIHono, { calls, ping, policy, schemas: s, traceUrl }: SystemRoutes): void {
  const health = z.object({ ok: z.boolean(), temporal: z.string() });
  app.openapi(
    createRoute({
      method: 'get',
      path: '/healthz',
      summary: 'Whether the service and Temporal answer (no token needed)',
      // Public (no token), so neither 400 nor 401.
      responses: { ...errorResponses(s, [421, 500]), 200: json(health, 'Healthy'), 503: json(health, 'Temporal is unreachable') },
    }),
    async (c) => {
      const reachable = await calls.listing(ping).then(
        () => true,
        () => false,
      );
      return reachable ? c.json({ ok: true, temporal: 'reachable' }, 200) : c.json({ ok: false, temporal: 'unreachable' }, 503);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/tool-definition',
      summary: "The todo_write function definition under this deployment's policy",
      responses: {
        ...errorResponses(s, [...GUARDED, 503], { 503: 'The service was started without a policy (invalid-setting)' }),
        200: json(z.object({}).passthrough(), 'OpenAI-compatible function tool'),
      },
    }),
    (c) => {
      if (policy === undefined) {
        return c.json({ error: 'this service was started without a policy: pass --allow-parallel-in-progress or set ALLOW_PARALLEL_IN_PROGRESS', code: 'invalid-setting' as const }, 503);
      }
      return c.json(todoWriteToolDefinition(policy), 200);
    },
  );

  app.openapi(createRoute({ method: 'get', path: '/auth', hide: true, responses: { 204: { description: 'The token (or none) is accepted' } } }), (c) => c.body(null, 204));

  // What the dashboard needs of the service's settings: where a turn's trace opens.
  app.openapi(createRoute({ method: 'get', path: '/dashboard-config', hide: true, responses: { 200: { description: 'The trace URL template, or null' } } }), (c) =>
    c.json({ traceUrl: traceUrl ?? null }, 200),
  );

  app.openapi(createRoute({ method: 'get', path: '/openapi.json', hide: true, responses: { 200: { description: 'This document' } } }), (c) =>
    c.json(
      app.getOpenAPI31Document({
        openapi: '3.1.0',
        info: {
          title: 'agent-sessions',
          version: '0.1.0',
          description: 'Durable AI-agent sessions on Temporal: todo lists written with todo_write, turns, subagents, live state.',
        },
      }),
      200,
    ),
  );
}
