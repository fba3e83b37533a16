import { createHash } from 'node:crypto';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import type { WithheldTool } from '../src/session/tool-pins';
import { boundToolResult } from '../src/session/agent-context';
import type { ToolDefinition, ToolOutcome } from './agent-contract';
import { MCP_LIST_TIMEOUT_MS, type McpPool } from './mcp-pool';

/** What every MCP tool's name starts with: `mcp__<server>__<tool>`, Claude Code's convention. */
export const MCP_TOOL_PREFIX = 'mcp__';

/** What OpenAI-compatible APIs accept as a function name. */
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The name the model sees for `tool` of `server`. */
export function mcpToolName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${server}__${tool}`;
}

/** The server and the tool's own name in an `mcp__<server>__<tool>` name (a server name holds no `__`). */
export function parseMcpToolName(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return undefined;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const split = rest.indexOf('__');
  if (split <= 0 || split === rest.length - 2) return undefined;
  return { server: rest.slice(0, split), tool: rest.slice(split + 2) };
}

/** The tools of every configured server for one turn, and what the model is told of servers that gave none. */
export interface McpToolListing {
  definitions: ToolDefinition[];
  /** One sentence per server whose tools are missing this turn, and why. */
  notes: string[];
}

/**
 * Lists the tools of every server, side by side, each within {@link MCP_LIST_TIMEOUT_MS}: a
 * server that cannot be started, hangs or fails is left out of this turn with a note saying so,
 * and the turn goes on with the others. Only the tools a server's `tools` setting names are
 * offered, when it has one; a tool whose full name an OpenAI-compatible API would refuse is left
 * out with a note.
 */
export async function listMcpTools(pool: McpPool): Promise<McpToolListing> {
  const listings = await Promise.all(
    pool.servers.map(async (server) => {
      try {
        const tools = await withTimeout(pool.listTools(server.name), MCP_LIST_TIMEOUT_MS, `listing its tools took longer than ${MCP_LIST_TIMEOUT_MS / 1000} s`);
        return { server: server.name, tools: server.tools !== undefined ? tools.filter((tool) => server.tools!.includes(tool.name)) : tools };
      } catch (error) {
        return { server: server.name, error: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
  const definitions: ToolDefinition[] = [];
  const notes: string[] = [];
  for (const listing of listings) {
    if ('error' in listing) {
      notes.push(`The tools of the MCP server "${listing.server}" are not available this turn: ${listing.error}.`);
      continue;
    }
    for (const tool of listing.tools) {
      const name = mcpToolName(listing.server, tool.name);
      if (!FUNCTION_NAME.test(name)) {
        notes.push(`The tool "${tool.name}" of the MCP server "${listing.server}" is not offered: ${JSON.stringify(name)} is not a valid function name (1-64 letters, digits, _ or -).`);
        continue;
      }
      definitions.push(mcpToolDefinition(name, tool));
    }
  }
  return { definitions, notes };
}

/**
 * The hash a session pins a tool's definition by: its description and its parameters' JSON
 * Schema, keys in a fixed order, so the same definition always hashes the same.
 */
export function definitionHash(definition: ToolDefinition): string {
  const { description, parameters } = definition.function;
  return createHash('sha256').update(canonicalJson({ description, parameters })).digest('hex').slice(0, 32);
}

/** What a turn offers of the servers' tools, given the definitions the session trusts. */
export interface PinnedTools {
  /** The tools to offer: unpinned ones (pinned from now on) and those whose definition is the pinned one. */
  offered: ToolDefinition[];
  /** Every pin, the new ones added. */
  pins: Record<string, string>;
  /** The tools whose definition differs from their pin, not offered. */
  withheld: WithheldTool[];
}

/**
 * Holds each tool to the definition the session first offered: a tool seen for the first time
 * is pinned and offered; one whose description or schema changed since is withheld until an
 * operator accepts the new definition (`agent-sessions tools accept`). A server is not trusted
 * to keep its word between listings.
 */
export function pinTools(definitions: readonly ToolDefinition[], pins: Readonly<Record<string, string>>): PinnedTools {
  const next: Record<string, string> = { ...pins };
  const offered: ToolDefinition[] = [];
  const withheld: WithheldTool[] = [];
  for (const definition of definitions) {
    const name = definition.function.name;
    const hash = definitionHash(definition);
    const pinned = pins[name];
    if (pinned === undefined) next[name] = hash;
    if (pinned === undefined || pinned === hash) {
      offered.push(definition);
      continue;
    }
    withheld.push({
      name,
      reason: `its description or input schema changed since this session first offered it (definition ${pinned.slice(0, 12)} then, ${hash.slice(0, 12)} now); an operator must accept the new one`,
      pinned,
      offered: hash,
    });
  }
  return { offered, pins: next, withheld };
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A server's tool as an OpenAI function definition: its description and input schema as the server gave them. */
export function mcpToolDefinition(name: string, tool: Tool): ToolDefinition {
  const parameters: Record<string, unknown> = { ...(tool.inputSchema as Record<string, unknown>) };
  delete parameters.$schema;
  if (parameters.type !== 'object') parameters.type = 'object';
  return { type: 'function', function: { name, description: tool.description ?? tool.title ?? tool.name, parameters } };
}

/**
 * An MCP tool result as the model reads it: the text blocks as they are, structured content as
 * JSON when no text says it, every other block named (an image, audio, a resource or a link,
 * with its type and size) rather than dropped, cut like every tool result. `isError` makes it a
 * failed call the model reads, not a failure of the turn.
 */
export function mcpOutcome(result: CallToolResult): ToolOutcome {
  const parts: string[] = [];
  let hasText = false;
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text':
        hasText = true;
        parts.push(block.text);
        break;
      case 'image':
      case 'audio':
        parts.push(`[${block.type} ${block.mimeType}, ${Math.round((block.data.length * 3) / 4)} bytes, not shown]`);
        break;
      case 'resource': {
        const resource = block.resource as { uri: string; mimeType?: string; text?: string; blob?: string };
        parts.push(resource.text !== undefined ? `[resource ${resource.uri}]\n${resource.text}` : `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}, binary, not shown]`);
        break;
      }
      case 'resource_link':
        parts.push(`[resource link ${block.uri}${block.name ? ` "${block.name}"` : ''}]`);
        break;
      default:
        parts.push(`[${(block as { type: string }).type} content, not shown]`);
    }
  }
  if (result.structuredContent !== undefined && !hasText) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join('\n');
  return { ok: result.isError !== true, content: boundToolResult(text === '' ? '(the tool returned no content)' : text) };
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(what)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
