import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { InvalidInputError } from '../../client/errors';
import { errorAnswer } from '../http-errors';
import type { SessionReader } from '../session-reader';
import type { StreamHub, StreamStart } from '../stream-hub';
import { errorResponses, GUARDED, SESSION, sessionIdParam as params, type ApiSchemas } from './route-docs';

/** How often an idle stream gets a comment line, so proxies and browsers keep the connection open. */
const KEEP_ALIVE_MS = 15_000;

/**
 * A stream offset as a reader names it, as a JSON Schema `pattern` (ECMAScript and Python read it
 * alike): a whole number of at most 15 digits, so that every one counts exactly. The document
 * states it for `?from=` and `Last-Event-ID`, and {@link offsetOf} reads them with it.
 */
const OFFSET_PATTERN = '^[0-9]{1,15}$';
const OFFSET = new RegExp(OFFSET_PATTERN);

/**
 * `GET /sessions/{id}/stream`: Server-Sent Events of the model's words as a session's model calls
 * write them (see docs/streaming.md). 200 at once for any session that exists, between turns too;
 * then `ready` (where the reading begins), and one event per entry of the session's stream, named
 * by its type (`start`, `reset`, `text`, `tool`, `arguments`, `end`), with `id:` its offset; a
 * browser that reconnects sends the last one as `Last-Event-ID` and resumes right after it. Where
 * to begin: `Last-Event-ID: N` (after N), else `?from=N` (at N), else the model call in progress
 * from its first word (or the next words when none is in progress). Entries the stream no longer
 * holds come as one `gap`; a problem reading the stream as `problem` (the reading goes on).
 */
export function sessionStreamRoutes(app: OpenAPIHono, { reader, hub, schemas: s }: { reader: SessionReader; hub: StreamHub | undefined; schemas: ApiSchemas }): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/sessions/{id}/stream',
      summary: "Server-Sent Events: the model's words as the session's model calls write them (id: the stream offset; resume with Last-Event-ID)",
      request: {
        params,
        query: z.object({ from: z.string().optional().openapi({ description: 'The offset to begin at (a whole number); Last-Event-ID wins over it', example: '0', pattern: OFFSET_PATTERN }) }),
        headers: z.object({
          'last-event-id': z.string().optional().openapi({ description: 'The id of the last event received: the stream resumes right after it', example: '14', pattern: OFFSET_PATTERN }),
        }),
      },
      // OpenAPI 3.1 gives an event stream's schema as the schema of one event.
      responses: {...errorResponses(s, [...GUARDED, ...SESSION]), 200: { description: 'Server-Sent Events, one per change', content: { 'text/event-stream': { schema: s.streamEvent } } } },
    }),
    async (c) => {
      const sessionId = c.req.valid('param').id;
      const lastEventId = c.req.header('Last-Event-ID');
      const from = c.req.valid('query').from;
      // Both are checked when both are given, though Last-Event-ID wins: a malformed one is refused.
      const fromOffset = from !== undefined ? offsetOf('from', from) : undefined;
      const start: StreamStart = lastEventId !== undefined ? offsetOf('Last-Event-ID', lastEventId) + 1 : (fromOffset ?? 'current');
      // 404 / 503 / 504 before the stream starts. Temporal alone answers it, not the session's
      // worker: the words are in the stream store, readable while the workers are down or busy.
      await reader.exists(sessionId);
      return streamSSE(c, async (stream) => {
        let queue = Promise.resolve();
        const write = (message: Parameters<typeof stream.writeSSE>[0]): void => {
          queue = queue.then(() => stream.writeSSE(message)).catch(() => undefined);
        };
        if (hub === undefined) {
          write({ event: 'ready', data: JSON.stringify({ sessionId, from: 0, end: 0 }) });
          write({ event: 'problem', data: JSON.stringify({ error: NO_STORE, code: 'stream-store-setting' }) });
        }
        const stop = (hub ?? NO_HUB).subscribe(sessionId, start, {
          onStart: ({ from: first, end }) => {
            const note =
              typeof start === 'number' && start > first
                ? { note: `offset ${start} is past the end of this stream (its next entry is ${end}): reading from ${first}` }
                : {};
            write({ event: 'ready', data: JSON.stringify({ sessionId, from: first, end, ...note }) });
          },
          onEntry: (entry) => {
            if (entry.kind === 'gap') write({ event: 'gap', data: JSON.stringify({ from: entry.from, to: entry.to }) });
            else if (entry.kind === 'malformed') {
              write({ event: 'malformed', id: String(entry.offset), data: JSON.stringify({ offset: entry.offset, error: `entry ${entry.offset} of the stream is not a model event; it is passed over` }) });
            } else write({ event: entry.event.type, id: String(entry.offset), data: JSON.stringify(entry.event) });
          },
          onProblem: (error) => write({ event: 'problem', data: JSON.stringify(errorAnswer(error).body) }),
        });
        const keepAlive = setInterval(() => {
          queue = queue.then(() => stream.write(': keep-alive\n\n')).then(() => undefined, () => undefined);
        }, KEEP_ALIVE_MS);
        await new Promise<void>((resolve) => stream.onAbort(resolve));
        clearInterval(keepAlive);
        stop();
      });
    },
  );
}

/** What a reader is told by a service started without a stream store. */
const NO_STORE = 'this HTTP service was started without a stream store, so it has no words to send: start it with the store the workers write to (AGENT_SESSIONS_STREAM_STORE, or the streamStore option)';

/** The hub of a service without a store: nobody to send anything. */
const NO_HUB: Pick<StreamHub, 'subscribe'> = { subscribe: () => () => undefined };

/** `text` as a stream offset, or a 400 naming `what` and the value. */
function offsetOf(what: string, text: string): number {
  if (!OFFSET.test(text)) {
    throw new InvalidInputError(
      `${what} must be a stream offset (a whole number from 0, of at most 15 digits, as the id: of an event of this stream), got ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)}`,
    );
  }
  return Number(text);
}
