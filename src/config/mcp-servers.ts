import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { InvalidSettingError } from '../client/errors';

/** How the worker reaches one MCP server. */
export type McpServerTransport =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { kind: 'http'; url: string; headers: Record<string, string> };

/** One MCP server the agent takes tools from (`AGENT_SESSIONS_MCP_CONFIG`). */
export interface McpServerConfig {
  /** The key in `mcpServers`: the model sees its tools as `mcp__<name>__<tool>`. */
  name: string;
  transport: McpServerTransport;
  /** Longest one call may take before the model is told it timed out (`timeoutMs`, default 5 minutes). */
  callTimeoutMs: number;
  /** The tools to offer (`tools`: the server's own names); absent, every tool it lists. */
  tools?: string[];
}

/** A call's time limit when the server's entry gives none. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 5 * 60_000;

/** A server name: what fits in `mcp__<name>__<tool>` and cannot be mistaken for the separator. */
const SERVER_NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;

const STDIO_FIELDS = new Set(['type', 'command', 'args', 'env', 'cwd', 'timeoutMs', 'tools']);
const HTTP_FIELDS = new Set(['type', 'url', 'headers', 'timeoutMs', 'tools']);

/**
 * Reads `AGENT_SESSIONS_MCP_CONFIG`: a JSON file in the shape Claude Code and Cursor use,
 * `{"mcpServers": {"NAME": {"command", "args", "env", "cwd"} | {"url", "headers"}}}`, plus two
 * fields of ours per server: `timeoutMs` (one call's limit) and `tools` (which of its tools to
 * offer). `${VAR}` (and `${VAR:-default}`) in `env` and `headers` are taken from `env`, the
 * worker's environment. A relative `cwd` is relative to the file.
 *
 * @throws InvalidSettingError in one sentence naming the file, the server and the field.
 */
export function loadMcpServers(file: string, env: NodeJS.ProcessEnv): McpServerConfig[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InvalidSettingError(`AGENT_SESSIONS_MCP_CONFIG: cannot read ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InvalidSettingError(`AGENT_SESSIONS_MCP_CONFIG: ${file} is not JSON (${(error as Error).message}); expected {"mcpServers": {"NAME": {...}}}`);
  }
  return parseMcpServers(json, env, { file, dir: resolve(file, '..') });
}

/**
 * The servers of an `mcpServers` document (see {@link loadMcpServers}); `where` names the file
 * in messages and anchors relative `cwd`s.
 *
 * @throws InvalidSettingError naming the server and the field.
 */
export function parseMcpServers(json: unknown, env: NodeJS.ProcessEnv, where: { file: string; dir: string }): McpServerConfig[] {
  const fail = (detail: string) => new InvalidSettingError(`AGENT_SESSIONS_MCP_CONFIG (${where.file}): ${detail}`);
  if (!isObject(json) || !isObject(json.mcpServers)) throw fail('expected an object {"mcpServers": {"NAME": {...}}}');
  const extra = Object.keys(json).filter((key) => key !== 'mcpServers');
  if (extra.length > 0) throw fail(`unknown field ${JSON.stringify(extra[0])} beside "mcpServers"`);
  return Object.entries(json.mcpServers).map(([name, entry]) => {
    const field = (key: string, detail: string) => fail(`server ${JSON.stringify(name)}: "${key}" ${detail}`);
    if (!SERVER_NAME.test(name) || name.length > 32) {
      throw fail(`server name ${JSON.stringify(name)} must be 1-32 letters, digits, "-" or single "_" (its tools are named mcp__${name}__<tool>)`);
    }
    if (!isObject(entry)) throw fail(`server ${JSON.stringify(name)} must be an object with "command" (stdio) or "url" (Streamable HTTP)`);
    const isHttp = entry.url !== undefined;
    if (isHttp === (entry.command !== undefined)) throw fail(`server ${JSON.stringify(name)} needs exactly one of "command" (stdio) and "url" (Streamable HTTP)`);
    const known = isHttp ? HTTP_FIELDS : STDIO_FIELDS;
    const unknown = Object.keys(entry).find((key) => !known.has(key));
    if (unknown !== undefined) throw field(unknown, `is not a field of ${isHttp ? 'an HTTP' : 'a stdio'} server (${[...known].join(', ')})`);
    if (entry.type !== undefined && !(isHttp ? ['http', 'streamable-http', 'streamableHttp'] : ['stdio']).includes(entry.type as string)) {
      throw field('type', `is ${JSON.stringify(entry.type)}; ${isHttp ? 'a server with "url" is "http"' : 'a server with "command" is "stdio"'}`);
    }
    const expand = (key: string, value: string) =>
      value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, variable: string, fallback: string | undefined) => {
        const found = env[variable];
        if (found !== undefined && found !== '') return found;
        if (fallback !== undefined) return fallback;
        throw field(key, `uses \${${variable}}, which is not set in the worker's environment`);
      });
    const strings = (key: string, value: unknown): Record<string, string> => {
      if (value === undefined) return {};
      if (!isObject(value) || Object.values(value).some((v) => typeof v !== 'string')) throw field(key, 'must be an object of strings');
      return Object.fromEntries(Object.entries(value as Record<string, string>).map(([k, v]) => [k, expand(`${key}.${k}`, v)]));
    };
    const timeout = entry.timeoutMs;
    if (timeout !== undefined && !(typeof timeout === 'number' && Number.isInteger(timeout) && timeout >= 1000 && timeout <= 3_600_000)) {
      throw field('timeoutMs', `must be a whole number of milliseconds from 1000 to 3600000, got ${JSON.stringify(timeout)}`);
    }
    const tools = entry.tools;
    if (tools !== undefined && !(Array.isArray(tools) && tools.every((t) => typeof t === 'string' && t !== ''))) throw field('tools', 'must be a list of tool names');
    let transport: McpServerTransport;
    if (isHttp) {
      const url = entry.url;
      if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) throw field('url', `must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
      try {
        new URL(url);
      } catch {
        throw field('url', `is not a URL: ${JSON.stringify(url)}`);
      }
      transport = { kind: 'http', url, headers: strings('headers', entry.headers) };
    } else {
      const { command, args, cwd } = entry;
      if (typeof command !== 'string' || command.trim() === '') throw field('command', 'must be the program to start, e.g. "npx"');
      if (args !== undefined && !(Array.isArray(args) && args.every((a) => typeof a === 'string'))) throw field('args', 'must be a list of strings');
      if (cwd !== undefined && (typeof cwd !== 'string' || cwd === '')) throw field('cwd', 'must be a folder');
      transport = {
        kind: 'stdio',
        command,
        args: (args as string[] | undefined) ?? [],
        env: strings('env', entry.env),
        ...(typeof cwd === 'string' ? { cwd: isAbsolute(cwd) ? cwd : resolve(where.dir, cwd) } : {}),
      };
    }
    return {
      name,
      transport,
      callTimeoutMs: (timeout as number | undefined) ?? DEFAULT_MCP_CALL_TIMEOUT_MS,
      ...(tools !== undefined ? { tools: [...(tools as string[])] } : {}),
    };
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
