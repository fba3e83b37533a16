import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, Server, type CallToolResult } from '@modelcontextprotocol/server';
import { AgentSessionsError, SessionNotFoundError } from '../client/errors';
import type { SessionSnapshot, TodoWriteResult } from '../session';
import { countTodos, renderCounts, TODO_WRITE_TOOL_NAME, type TodoList, type TodoPolicy } from '../todo';
import { sessionInstructions, sessionTools, TODO_READ_TOOL_NAME, todosResourceUri } from './session-tools';

/** What a session's MCP server does with the session: one write, one read. */
export interface SessionPort {
  /** Sends `todo_write` (creating the session with its first write); throws the client's typed errors. */
  write(args: unknown): Promise<TodoWriteResult>;
  /** The session as its `session` query answers; throws `SessionNotFoundError` before its first write. */
  read(): Promise<SessionSnapshot>;
}

/** Options of {@link createSessionMcpServer}. */
export interface SessionMcpServerOptions {
  sessionId: string;
  /** The deployment's policy: it words `todo_write`'s description, as `tool-definition` prints it. */
  policy: TodoPolicy;
  session: SessionPort;
  /** The package version, as `serverInfo` names it. */
  version: string;
  /**
   * How this connection learns of changes to the list, if it can: `'listen'` for the 2026-07-28
   * protocol, whose `subscriptions/listen` streams the SDK's serving entry holds (the instance
   * only declares the capability); a function for a 2025 connection that keeps its transport
   * open (stdio), called on `resources/subscribe` with the URI and returning what ends it.
   * Left out where nothing could be delivered (the stateless HTTP fallback of the 2025 protocol).
   */
  subscriptions?: 'listen' | ((uri: string) => () => void);
  /** Where errors that are not the client's fault are reported (the process's log). */
  onInternalError?: (error: unknown) => void;
}

/** The JSON a `todo_read` and a read of the resource answer. */
export interface TodosReading {
  sessionId: string;
  /** The list, or `null` when the current turn has none (or the session has not been written yet). */
  todos: TodoList;
  counts: ReturnType<typeof countTodos>;
  /** Events the session applied; 0 before its first write. */
  version: number;
  turn: number;
  closed: boolean;
}

const RESOURCE_MIME = 'application/json';

/**
 * A session as an MCP server (MCP's low-level `Server`, one instance per connection or per
 * request, as the SDK's serving entries ask): the tools `todo_write` and `todo_read`, and the
 * list as the resource `session://<id>/todos`.
 *
 * A `todo_write` call is the session's `todo_write` Update, decided by the same validator as
 * every other writer: an accepted write answers the render line; a refused one answers a tool
 * result with `isError: true` carrying the validator's sentence (the rule and the offending
 * value), and nothing reaches history. An unknown tool is a protocol error (-32602) naming the
 * tools there are. No argument is repaired here: the validator is the one judge.
 */
export function createSessionMcpServer(options: SessionMcpServerOptions): Server {
  const { sessionId, policy, session } = options;
  const uri = todosResourceUri(sessionId);
  const tools = sessionTools(policy);
  const server = new Server(
    { name: 'agent-sessions', title: `agent-sessions: session ${sessionId}`, version: options.version },
    {
      capabilities: { tools: {}, resources: { subscribe: options.subscriptions !== undefined } },
      instructions: sessionInstructions(sessionId),
    },
  );

  server.setRequestHandler('tools/list', () => ({ tools }));

  server.setRequestHandler('tools/call', async (request): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    if (name === TODO_WRITE_TOOL_NAME) {
      return answered(async () => renderCounts(await session.write(args ?? {})), options.onInternalError);
    }
    if (name === TODO_READ_TOOL_NAME) {
      const extra = Object.keys(args ?? {});
      if (extra.length > 0) {
        return refused(`todo_read takes no arguments; got ${extra.map((key) => JSON.stringify(key)).join(', ')}: call it with {}`);
      }
      return answered(async () => JSON.stringify(await readTodos(sessionId, session)), options.onInternalError);
    }
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `unknown tool ${JSON.stringify(name)}: this server has ${tools.map((tool) => tool.name).join(' and ')}`,
    );
  });

  server.setRequestHandler('resources/list', () => ({
    resources: [{ uri, name: 'todos', title: `The todo list of session ${sessionId}`, mimeType: RESOURCE_MIME }],
  }));

  server.setRequestHandler('resources/read', async (request) => {
    requireOwnUri(request.params.uri, uri);
    try {
      return { contents: [{ uri, mimeType: RESOURCE_MIME, text: JSON.stringify(await readTodos(sessionId, session)) }] };
    } catch (error) {
      throw asProtocolError(error, options.onInternalError);
    }
  });

  if (typeof options.subscriptions === 'function') {
    const subscribe = options.subscriptions;
    const subscriptions = new Map<string, () => void>();
    server.setRequestHandler('resources/subscribe', (request) => {
      requireOwnUri(request.params.uri, uri);
      if (!subscriptions.has(uri)) subscriptions.set(uri, subscribe(uri));
      return {};
    });
    server.setRequestHandler('resources/unsubscribe', (request) => {
      requireOwnUri(request.params.uri, uri);
      subscriptions.get(uri)?.();
      subscriptions.delete(uri);
      return {};
    });
    const previousClose = server.onclose;
    server.onclose = () => {
      for (const stop of subscriptions.values()) stop();
      subscriptions.clear();
      previousClose?.();
    };
  }
  return server;
}

/** The list, its counts, version and turn; an empty reading before the session's first write. */
export async function readTodos(sessionId: string, session: SessionPort): Promise<TodosReading> {
  try {
    const s = await session.read();
    return { sessionId, todos: s.todos, counts: s.counts, version: s.version, turn: s.turn, closed: s.closed };
  } catch (error) {
    if (error instanceof SessionNotFoundError) return { sessionId, todos: null, counts: countTodos(null), version: 0, turn: 0, closed: false };
    throw error;
  }
}

/**
 * Runs a tool and answers its text; an error the library throws on purpose (a refused write,
 * a closed session, Temporal out of reach) is a tool result the model reads, in the library's
 * own sentence, so it can correct itself or try again later.
 */
async function answered(run: () => Promise<string>, onInternalError: ((error: unknown) => void) | undefined): Promise<CallToolResult> {
  try {
    return { content: [{ type: 'text', text: await run() }] };
  } catch (error) {
    if (error instanceof AgentSessionsError) return refused(error.message);
    onInternalError?.(error);
    return refused(`the session could not be reached: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function refused(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function requireOwnUri(asked: string, own: string): void {
  if (asked !== own) {
    throw new ResourceNotFoundError(asked, `no resource ${JSON.stringify(asked)} here: this server has ${own}`);
  }
}

function asProtocolError(error: unknown, onInternalError: ((error: unknown) => void) | undefined): ProtocolError {
  if (!(error instanceof AgentSessionsError)) onInternalError?.(error);
  return new ProtocolError(ProtocolErrorCode.InternalError, error instanceof Error ? error.message : String(error));
}
