import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { OutcomeUnknownError, type SessionClient } from '../../client';
import { strictJsonBody } from '../json-body';
import { withTimeLimit } from '../time-limit';
import { refuseInvalid } from '../validation';
import { errorResponses, GUARDED, json, SESSION, sessionIdParam as params, WRITE, type ApiSchemas } from './route-docs';

/**
 * How long a fork may take: the worker replays the source's history to the fork point, and the
 * first fork a worker serves also bundles the code it replays with (seconds, once).
 */
export const FORK_TIME_LIMIT_MS = 4 * 60_000;

/** What the fork route needs. */
export interface ForkRoutes {
  client: SessionClient;
  schemas: ApiSchemas;
}

/**
 * `POST /sessions/{id}/fork`: start a new session from this one's state at one event of its
 * history (or just before a turn, or at the newest event). 201 with the new session; 404 for a
 * missing source, 409 for a taken id, 422 naming a run, event or turn the source does not have.
 */
export function forkRoutes(app: OpenAPIHono, { client, schemas: s }: ForkRoutes): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/sessions/{id}/fork',
      summary:
        "Start session newId from this session's state at one event of its history: {\"newId\", \"at\": {\"eventId\", \"runId\"?}} (the current run without runId), " +
        '{"newId", "beforeTurn": N} (just before turn N began) or {"newId"} (the newest event). The source is not touched',
      middleware: [strictJsonBody],
      request: { params, body: { required: true, content: { 'application/json': { schema: s.fork } } } },
      responses: {
        ...errorResponses(s, [...GUARDED, ...WRITE, ...SESSION, 409, 422], {
          409: 'newId is taken (session-exists): ids are never reused',
          422: 'The source has no such run, event or turn (rejected: no-such-run, no-such-event, no-such-turn), or its history does not replay (replay-failed)',
          504: 'No answer in time (outcome-unknown): the new session may have been started',
        }),
        201: json(s.forked, 'Forked: the new session, where it came from and the subagents that were open there'),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { newId, at, beforeTurn } = c.req.valid('json');
      const point = at !== undefined ? { eventId: at.eventId, ...(at.runId !== undefined ? { runId: at.runId } : {}) } : beforeTurn !== undefined ? { beforeTurn } : {};
      const forked = await withTimeLimit(
        client.temporal.connection,
        FORK_TIME_LIMIT_MS,
        () => client.fork(id, newId, point),
        () => new OutcomeUnknownError(newId, undefined, FORK_TIME_LIMIT_MS),
      );
      return c.json(forked, 201);
    },
    refuseInvalid(
      'the body must be {"newId": "<new session id>"} with at most one of "at": {"eventId": <positive integer>, "runId": "<run id>"} and "beforeTurn": <positive integer>',
    ) as never,
  );
}
