import { Client, StreamableHTTPClientTransport, type CallToolResult, type Tool } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { McpServerConfig } from '../src/config/mcp-servers';

/** A connected server and the promise that it is connected. */
interface Connection {
  client: Client;
  ready: Promise<Client>;
}

/** Where the pool writes what its servers say on stderr and what happens to them. */
export type McpLog = (line: string) => void;

/** The largest single message a stdio server may send: a 10 MB answer is read, then cut for the model. */
const STDIO_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** How long listing a server's tools may take at a turn's start before the turn goes on without them. */
export const MCP_LIST_TIMEOUT_MS = 15_000;

/**
 * The MCP servers of one worker (`AGENT_SESSIONS_MCP_CONFIG`), each connected once and shared by
 * every activity of the worker: a stdio server is started on first use, its stderr goes to the
 * worker's log under its name, and it is started again on the next use after it died; an HTTP
 * server is reached the same way. {@link close} ends them all at the worker's shutdown.
 */
export class McpPool {
  private readonly connections = new Map<string, Connection>();
  private closed = false;

  constructor(
    readonly servers: readonly McpServerConfig[],
    private readonly log: McpLog = (line) => process.stderr.write(`${line}\n`),
    private readonly clientVersion = '0.0.0',
  ) {}

  /** The server named `name`, if the configuration has it. */
  server(name: string): McpServerConfig | undefined {
    return this.servers.find((server) => server.name === name);
  }

  /** The server's tools, all of them (paged through), as it lists them now. */
  async listTools(name: string, signal?: AbortSignal): Promise<Tool[]> {
    const client = await this.connect(name);
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.dropOnFailure(name, client, () => client.listTools(cursor !== undefined ? { cursor } : {}, { ...(signal !== undefined ? { signal } : {}), timeout: MCP_LIST_TIMEOUT_MS }));
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && tools.length < 10_000);
    return tools;
  }

  /**
   * Calls one tool. `signal` aborts it (the SDK then sends the server `notifications/cancelled`);
   * `onProgress` hears the server's progress notifications; `meta` goes in the request's `_meta`.
   */
  async callTool(
    name: string,
    tool: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number; onProgress: () => void; meta: Record<string, unknown> },
  ): Promise<CallToolResult> {
    const client = await this.connect(name);
    return this.dropOnFailure(name, client, () =>
      client.callTool(
        { name: tool, arguments: args, _meta: options.meta },
        { signal: options.signal, timeout: options.timeoutMs, resetTimeoutOnProgress: false, maxTotalTimeout: options.timeoutMs, onprogress: () => options.onProgress() },
      ),
    );
  }

  /** Closes every connection (stopping stdio servers); later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.connections.values()];
    this.connections.clear();
    await Promise.allSettled(open.map(async ({ client }) => client.close()));
  }

  private connect(name: string): Promise<Client> {
    if (this.closed) return Promise.reject(new Error('the worker is shutting down'));
    const existing = this.connections.get(name);
    if (existing !== undefined) return existing.ready;
    const server = this.server(name);
    if (server === undefined) return Promise.reject(new Error(`no MCP server named ${JSON.stringify(name)} is configured`));
    const client = new Client({ name: 'agent-sessions', version: this.clientVersion });
    const transport =
      server.transport.kind === 'stdio'
        ? new StdioClientTransport({
            command: server.transport.command,
            args: server.transport.args,
            env: { ...getDefaultEnvironment(), ...server.transport.env },
            ...(server.transport.cwd !== undefined ? { cwd: server.transport.cwd } : {}),
            stderr: 'pipe',
            maxBufferSize: STDIO_MAX_MESSAGE_BYTES,
          })
        : new StreamableHTTPClientTransport(new URL(server.transport.url), { requestInit: { headers: server.transport.headers } });
    if (transport instanceof StdioClientTransport) {
      let partial = '';
      transport.stderr?.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) if (line.trim() !== '') this.log(`[mcp:${name}] ${line}`);
      });
    }
    const connection: Connection = {
      client,
      ready: client.connect(transport).then(
        () => client,
        (error: unknown) => {
          this.forget(name, client);
          throw new Error(`the MCP server ${name} could not be started or reached: ${messageOf(error)}`);
        },
      ),
    };
    // A server that exits (or a connection that drops) is started again on the next use.
    client.onclose = () => {
      if (this.connections.get(name)?.client === client) {
        this.connections.delete(name);
        if (!this.closed) this.log(`[mcp:${name}] connection closed; it is started again on the next call`);
      }
    };
    this.connections.set(name, connection);
    return connection.ready;
  }

  /** Runs a request; a failure that is not the server's own answer drops the connection, so the next use reconnects. */
  private async dropOnFailure<T>(name: string, client: Client, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (isTransportFailure(error)) {
        this.forget(name, client);
        void client.close().catch(() => undefined);
      }
      throw error;
    }
  }

  private forget(name: string, client: Client): void {
    if (this.connections.get(name)?.client === client) this.connections.delete(name);
  }
}

/**
 * A failure of the connection rather than an answer of the server: a JSON-RPC error (numeric
 * code) is the server's answer, a timeout is one call's (the server may still serve others);
 * anything else (the connection closed, a send failed, the process died) drops the connection.
 */
function isTransportFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'number') return false;
  return code !== 'REQUEST_TIMEOUT' && !(error instanceof Error && error.name === 'AbortError');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
