import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { InvalidInputError, type SessionClient } from '../../client';
import { readJsonBody, strictJsonBody } from '../json-body';
import type { TemporalCalls } from '../temporal-calls';
import { refuseInvalid } from '../validation';
import { errorResponses, GUARDED, json, SESSION, sessionIdParam, WRITE, type ApiSchemas } from './route-docs';

/** What the agent routes need. */
export interface AgentRoutes {
  client: SessionClient;
  calls: TemporalCalls;
  schemas: ApiSchemas;
}

/** The `{id}` and `{callId}` path parameters of a decision on a waiting tool call. */
const callParams = sessionIdParam.extend({
  callId: z.string().max(200).openapi({ description: "The model's id of the waiting call, as `agent.pendingApprovals[].callId` shows it", example: 'call_0_0' }),
});

/**
 * The optional `{ "reason" }` of a decision. Left out altogether (no body, as `curl -X POST`
 * sends, or an empty one) it is `{}`; given, it must be strict UTF-8 JSON of that shape.
 *
 * @throws InvalidInputError naming what is wrong with the body (400).
 */
async function decisionBody(c: Context, schema: ApiSchemas['decision']): Promise<{ reason?: string }> {
  const length = c.req.header('Content-Length');
  if (c.req.header('Transfer-Encoding') === undefined && (length === undefined || Number(length) === 0)) return {};
  const parsed = schema.safeParse(await readJsonBody(c));
  if (!parsed.success) throw new InvalidInputError('the body, when there is one, must be {"reason": "<at most 2000 characters>"}');
  return parsed.data.reason !== undefined ? { reason: parsed.data.reason } : {};
}

/**
 * The agent loop of a session over HTTP: send a message (it starts a turn or waits for the
 * running one), read the conversation and the usage, interrupt the running turn, approve or deny
 * a tool call that waits for a person. Refusals are the session's own: 422 with the rule
 * (`empty-message`, `message-too-long`, `queue-full`, `no-running-turn`, `no-pending-call`), 409 for a closed
 * session; a change with no answer in time is 504 `outcome-unknown`.
 */
export function agentRoutes(app: OpenAPIHono, { client, calls, schemas: s }: AgentRoutes): void {
  const reads = errorResponses(s, [...GUARDED, ...SESSION]);
  const changes = (rules: string) => errorResponses(s, [...GUARDED, ...WRITE, ...SESSION, 409, 422], { 422: `Refused (rejected): rule ${rules}` });
  const params = sessionIdParam;
  app.openAPIRegistry.register('ToolDecision', s.decision);

  app.openapi(
    createRoute({
      method: 'post',
      path: '/sessions/{id}/messages',
      summary: "Give the session's agent a message: it starts a turn now, or waits for the running one (queued: true)",
      middleware: [strictJsonBody],
      request: { params, body: { required: true, content: { 'application/json': { schema: s.userMessage } } } },
      responses: {
        ...changes('empty-message or message-too-long (a text the schema does not allow), or queue-full (10 messages already wait)'),
        202: json(s.messageResult, 'Accepted: the turn runs (or waits); follow it with GET /sessions/{id} or its event stream'),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { text } = c.req.valid('json');
      return c.json(await calls.change(id, () => client.sendMessage(id, text)), 202);
    },
    refuseInvalid('the body must be {"text": "<the message>"}') as never,
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/sessions/{id}/transcript',
      summary: 'The conversation: every message kept, with tool calls and results, the usage and the last turn',
      request: { params },
      responses: { ...reads, 200: json(s.transcript, 'Transcript') },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      return c.json(await calls.read(id, () => client.transcript(id)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/sessions/{id}/usage',
      summary: "What the session's model calls cost, alone and summed over every subagent below it",
      request: { params },
      responses: { ...reads, 200: json(s.usageReport, 'Usage') },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { session, tree } = await calls.read(id, () => client.usage(id));
      return c.json({ session, tree }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/sessions/{id}/interrupt',
      summary: 'Stop the running turn: its model call is cancelled and it ends as interrupted (the list stays); answers how it ended',
      request: { params },
      responses: { ...changes('no-running-turn'), 200: json(s.turnOutcome.nullable(), 'The turn ended') },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      return c.json(await calls.change(id, () => client.interrupt(id)), 200);
    },
  );

  for (const decision of ['approve', 'deny'] as const) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/sessions/{id}/approvals/{callId}/${decision}`,
        summary:
          decision === 'approve'
            ? 'Let a tool call that waits for a person run; optional body {"reason"}'
            : 'Refuse a tool call that waits for a person (the model reads the refusal and the reason); optional body {"reason"}',
        // Documented, and checked in the handler: a decision may come with no body at all.
        request: { params: callParams, body: { required: false, content: { 'application/json': { schema: { $ref: '#/components/schemas/ToolDecision' } } } } },
        responses: { ...changes('no-pending-call (no call with that id waits)'), 200: json(s.decisionResult, 'Decided') },
      }),
      async (c) => {
        const { id, callId } = c.req.valid('param');
        const { reason } = await decisionBody(c, s.decision);
        return c.json(await calls.change(id, () => client[decision](id, callId, reason)), 200);
      },
    );
  }
}
