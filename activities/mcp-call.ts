import { Context } from '@temporalio/activity';
import type { ToolOutcome } from './agent-contract';
import type { McpPool } from './mcp-pool';
import { mcpOutcome, parseMcpToolName } from './mcp-tools';

/**
 * The `_meta` key of the idempotency key sent with every MCP tool call: the run and the activity
 * that make the call, the same on each of its attempts. A call is at least once (a worker that
 * dies mid-call has it made again elsewhere); a server that keeps the keys it has seen can answer
 * a repeat without doing the work twice.
 */
export const MCP_IDEMPOTENCY_META_KEY = 'io.agent-sessions/idempotency-key';

/** Attempts whose failure to reach the server is retried by Temporal before the model is told. */
const ATTEMPTS_BEFORE_TELLING = 3;

/**
 * Calls an `mcp__<server>__<tool>` tool inside the `runTool` activity. The activity heartbeats
 * around it (and on each progress notification); its cancellation (an `interrupt`) aborts the
 * request, which tells the server with `notifications/cancelled`, and is rethrown so the turn
 * sees it. What the model can act on is an outcome, never a failure of the turn: arguments that
 * are not a JSON object, an error the server answered, an `isError` result, a call that ran past
 * the server's `timeoutMs`. A server that cannot be reached is retried by Temporal (the pool
 * starts it again) and, from the third attempt on, told to the model.
 */
export async function callMcpTool(pool: McpPool, name: string, argumentsText: string, options: { idempotencyKey: string }): Promise<ToolOutcome> {
  const parsed = parseMcpToolName(name);
  const server = parsed !== undefined ? pool.server(parsed.server) : undefined;
  if (parsed === undefined || server === undefined) {
    return { ok: false, content: `${name}: this worker has no MCP server ${parsed !== undefined ? JSON.stringify(parsed.server) : 'for that name'}` };
  }
  let args: unknown;
  try {
    args = argumentsText.trim() === '' ? {} : JSON.parse(argumentsText);
  } catch (error) {
    return { ok: false, content: `${name}: the arguments are not valid JSON (${(error as Error).message}); send a JSON object` };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return { ok: false, content: `${name}: the arguments must be a JSON object` };
  const context = Context.current();
  try {
    const result = await pool.callTool(server.name, parsed!.tool, args as Record<string, unknown>, {
      signal: context.cancellationSignal,
      timeoutMs: server.callTimeoutMs,
      onProgress: () => context.heartbeat(),
      meta: { [MCP_IDEMPOTENCY_META_KEY]: options.idempotencyKey },
    });
    return mcpOutcome(result);
  } catch (error) {
    if (context.cancellationSignal.aborted) throw error;
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    if (code === 'REQUEST_TIMEOUT') {
      return { ok: false, content: `${name} did not answer within ${server.callTimeoutMs / 1000} s (the timeoutMs of the MCP server "${server.name}"); it was cancelled` };
    }
    if (typeof code === 'number') return { ok: false, content: `${name} failed: ${message}` };
    if (context.info.attempt < ATTEMPTS_BEFORE_TELLING) throw error;
    return { ok: false, content: `${name}: the MCP server "${server.name}" failed ${context.info.attempt} times: ${message}` };
  }
}
