import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Server } from '@modelcontextprotocol/server';
import type { SessionClient } from '../client';
import type { TodoPolicy } from '../todo';
import { createSessionMcpServer } from './session-mcp-server';
import { ListChanges, type WatchSession } from './session-watch';
import { todosResourceUri } from './session-tools';

/** Options of {@link serveSessionOverStdio}. */
export interface StdioSessionServerOptions {
  client: SessionClient;
  sessionId: string;
  policy: TodoPolicy;
  version: string;
  /** Watches the session for the resource's subscribers. */
  watch: WatchSession;
  /** Where the server reports what is not the client's fault (stderr: stdout carries the protocol). */
  log: (line: string) => void;
}

/**
 * Serves one session over stdio until the client closes stdin: whichever protocol the client
 * opens with (the 2025 `initialize` handshake, or 2026-07-28's per-request envelope), one
 * server instance is pinned to the connection by the SDK's `serveStdio`.
 *
 * The list's resource notifies on every accepted write, whoever wrote it, by watching the
 * session (its `session` query, polled) while someone listens: on a 2025 connection while a
 * `resources/subscribe` is open; on a 2026 connection for as long as it is open, because its
 * `subscriptions/listen` streams are held by the SDK's entry, which routes each change to the
 * subscriptions that asked for it.
 *
 * Resolves when the connection has ended.
 */
export function serveSessionOverStdio(options: StdioSessionServerOptions): Promise<void> {
  const { sessionId, watch, log } = options;
  const uri = todosResourceUri(sessionId);
  const reportError = (error: unknown) => log(`agent-sessions mcp: ${error instanceof Error ? error.message : String(error)}`);
  const changes = new ListChanges(watch);
  const session = {
    write: async (args: unknown) => {
      const result = await options.client.todoWrite(sessionId, args);
      changes.written(result.version);
      return result;
    },
    read: () => options.client.session(sessionId),
  };
  let modernWatch: (() => void) | undefined;

  /** Tells `server` of every change of the list until the returned function is called. */
  const notifyChanges = (server: Server) => changes.listen(() => void server.sendResourceUpdated({ uri }).catch(() => {}));

  return new Promise((resolve) => {
    const handle = serveStdio(
      ({ era }) => {
        const server = createSessionMcpServer({
          sessionId,
          policy: options.policy,
          version: options.version,
          session,
          onInternalError: reportError,
          // A 2025 connection subscribes with resources/subscribe, seen by the instance itself.
          subscriptions: era === 'legacy' ? () => notifyChanges(server) : 'listen',
        });
        // One connection, one pinned instance: a modern instance the SDK built for a probe and
        // then dropped (the client fell back to 2025) must stop watching when the next one comes.
        modernWatch?.();
        modernWatch = era === 'modern' ? notifyChanges(server) : undefined;
        return server;
      },
      { onerror: reportError },
    );
    process.stdin.once('end', () => {
      modernWatch?.();
      void handle.close().finally(() => resolve());
    });
  });
}
