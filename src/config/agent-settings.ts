import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidSettingError } from '../client/errors';
import { loadMcpServers, type McpServerConfig } from './mcp-servers';
import { booleanSetting, integerSetting, listSetting, nonEmpty } from './setting-values';

/**
 * The settings of the durable agent loop: which model it calls and how, how long a turn may
 * run, and what the model's tools may touch. The API key is a function, not a field, so no
 * `JSON.stringify`, log line or `util.inspect` of the settings can print it.
 */
export interface AgentSettings {
  /** `OPENAI_BASE_URL`: an OpenAI-compatible endpoint; absent means OpenAI's own. */
  baseUrl?: string;
  /** `OPENAI_API_KEY`, or `undefined` when unset. A function so that it never appears in serialized settings. */
  apiKey(): string | undefined;
  /** `AGENT_SESSIONS_MODEL`: the model name sent with every call. */
  model: string;
  /** `AGENT_SESSIONS_MAX_STEPS`: model calls per turn before the turn is ended. */
  maxSteps: number;
  /** `AGENT_SESSIONS_MAX_CONTEXT_CHARS`: characters of conversation sent to the model before it is compacted. */
  maxContextChars: number;
  /** `AGENT_SESSIONS_NUDGE`: nudge the model once when it ends a turn with todos still open. */
  nudge: boolean;
  /**
   * `AGENT_SESSIONS_APPROVE_TOOLS`: the tools whose calls wait for a person's approval, as names
   * or patterns with `*` (`mcp__fs__*`). Unset: {@link DEFAULT_APPROVE_TOOLS}, every MCP tool;
   * `none`: no tool waits.
   */
  approveTools: string[];
  /** `AGENT_SESSIONS_MCP_CONFIG`: the MCP servers the agent takes tools from; absent, none. */
  mcpServers?: McpServerConfig[];
  /** `AGENT_SESSIONS_TOOLS` (`--tools`): the user's tools module, an absolute path; absent, none. */
  toolsModule?: string;
  /** `AGENT_SESSIONS_WORKSPACE`: the folder file tools work in (absolute); absent means no file tools. */
  workspace?: string;
  /** `AGENT_SESSIONS_STREAM`: ask the model for streamed answers and append their words to the stream store. */
  stream: boolean;
  /** `AGENT_SESSIONS_STREAM_BATCH_MS`: how long streamed words are gathered into one append to the stream store. */
  streamBatchMs: number;
}

/** Defaults of the agent settings, as the README and `--help` state them. */
export const AGENT_DEFAULTS = Object.freeze({
  /** Small, cheap and able to call tools: a sensible first model; any chat-completions model works. */
  model: 'gpt-4o-mini',
  maxSteps: 25,
  maxContextChars: 100_000,
  nudge: true,
  stream: true,
  streamBatchMs: 200,
});

/**
 * The tools that wait for a person when `AGENT_SESSIONS_APPROVE_TOOLS` is unset: every tool of
 * an MCP server. A server's annotations (`readOnlyHint`, `destructiveHint`) are its own claims,
 * not proof, so nothing a server offers runs unasked until the operator says which may.
 */
export const DEFAULT_APPROVE_TOOLS: readonly string[] = Object.freeze(['mcp__*']);

/** The smallest context the loop can work in: the tool definitions, the plan and one exchange. */
export const MIN_CONTEXT_CHARS = 2000;

/** A tool name OpenAI accepts, or a pattern of one with `*` standing for any run of characters. */
const TOOL_PATTERN = /^[A-Za-z0-9_*-]{1,64}$/;

/**
 * Reads the agent settings from `env`.
 *
 * @throws InvalidSettingError naming the variable: a base URL that is not http(s), an API key
 *   or model name with spaces or control characters, a step or context limit out of range,
 *   `AGENT_SESSIONS_NUDGE` or `AGENT_SESSIONS_STREAM` other than true or false, a stream batch
 *   interval out of range, a tool name OpenAI would refuse, a
 *   workspace that is not an existing folder.
 */
export function agentSettingsFromEnv(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): AgentSettings {
  const baseUrl = baseUrlSetting(env.OPENAI_BASE_URL);
  const apiKey = apiKeySetting(env.OPENAI_API_KEY);
  const model = nonEmpty(env.AGENT_SESSIONS_MODEL) ?? AGENT_DEFAULTS.model;
  if (!/^\S{1,200}$/.test(model)) {
    throw new InvalidSettingError(`AGENT_SESSIONS_MODEL must be a model name of at most 200 characters without spaces, e.g. ${AGENT_DEFAULTS.model}, got ${JSON.stringify(env.AGENT_SESSIONS_MODEL)}`);
  }
  const approveTools = approveToolsSetting(env.AGENT_SESSIONS_APPROVE_TOOLS);
  const workspace = workspaceSetting(env.AGENT_SESSIONS_WORKSPACE, cwd);
  const mcpConfig = nonEmpty(env.AGENT_SESSIONS_MCP_CONFIG);
  const mcpServers = mcpConfig !== undefined ? loadMcpServers(resolve(cwd, mcpConfig), env) : undefined;
  const toolsModule = toolsModuleSetting(env.AGENT_SESSIONS_TOOLS, cwd);
  return {
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    apiKey: () => apiKey,
    model,
    maxSteps: integerSetting('AGENT_SESSIONS_MAX_STEPS', env.AGENT_SESSIONS_MAX_STEPS, { min: 1 }, 'model calls per turn') ?? AGENT_DEFAULTS.maxSteps,
    maxContextChars:
      integerSetting('AGENT_SESSIONS_MAX_CONTEXT_CHARS', env.AGENT_SESSIONS_MAX_CONTEXT_CHARS, { min: MIN_CONTEXT_CHARS }, 'characters of context') ??
      AGENT_DEFAULTS.maxContextChars,
    nudge: booleanSetting('AGENT_SESSIONS_NUDGE', env.AGENT_SESSIONS_NUDGE) ?? AGENT_DEFAULTS.nudge,
    approveTools,
    ...(workspace !== undefined ? { workspace } : {}),
    ...(mcpServers !== undefined ? { mcpServers } : {}),
    ...(toolsModule !== undefined ? { toolsModule } : {}),
    stream: booleanSetting('AGENT_SESSIONS_STREAM', env.AGENT_SESSIONS_STREAM) ?? AGENT_DEFAULTS.stream,
    streamBatchMs:
      integerSetting('AGENT_SESSIONS_STREAM_BATCH_MS', env.AGENT_SESSIONS_STREAM_BATCH_MS, { min: 10, max: 10_000 }, 'milliseconds') ?? AGENT_DEFAULTS.streamBatchMs,
  };
}

/** `AGENT_SESSIONS_APPROVE_TOOLS`: names and patterns, each once; unset, the default; `none`, nothing. */
function approveToolsSetting(raw: string | undefined): string[] {
  // Blank counts as unset, as compose writes an unset default.
  const given = nonEmpty(raw);
  if (given === undefined) return [...DEFAULT_APPROVE_TOOLS];
  if (given.trim().toLowerCase() === 'none') return [];
  const patterns = [...new Set(listSetting(given))];
  const bad = patterns.find((pattern) => !TOOL_PATTERN.test(pattern));
  if (bad !== undefined) {
    throw new InvalidSettingError(
      `AGENT_SESSIONS_APPROVE_TOOLS must list tool names or patterns separated by commas (each 1-64 letters, digits, _, - or *, e.g. mcp__fs__*), or none, got ${JSON.stringify(bad)}`,
    );
  }
  return patterns;
}

/** Whether `name` is one of `patterns` (a `*` stands for any run of characters). */
export function matchesToolPattern(name: string, patterns: readonly string[]): boolean {
  // A pattern holds only letters, digits, _, - and *: nothing else a regular expression reads.
  return patterns.some((pattern) => new RegExp(`^${pattern.split('*').join('.*')}$`).test(name));
}

function baseUrlSetting(raw: string | undefined): string | undefined {
  const text = nonEmpty(raw);
  if (text === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new InvalidSettingError(`OPENAI_BASE_URL must be an http or https URL, e.g. https://api.openai.com/v1, got ${JSON.stringify(raw)}`);
  }
  return text;
}

function apiKeySetting(raw: string | undefined): string | undefined {
  const key = nonEmpty(raw);
  // The message never shows the value: it is a secret, and it may sit in a log.
  if (key !== undefined && !/^[\x21-\x7e]+$/.test(key)) {
    throw new InvalidSettingError('OPENAI_API_KEY holds spaces or characters an Authorization header cannot carry (its value is not shown); set it to the key alone');
  }
  return key;
}

function toolsModuleSetting(raw: string | undefined, cwd: string): string | undefined {
  return existingPath(raw, cwd, 'file', (problem) => `--tools (AGENT_SESSIONS_TOOLS) must name a JavaScript module whose default export lists tools, got ${JSON.stringify(raw)}: ${problem}`);
}

function workspaceSetting(raw: string | undefined, cwd: string): string | undefined {
  return existingPath(raw, cwd, 'folder', (problem) => `AGENT_SESSIONS_WORKSPACE must be an existing folder (the file tools work in it), got ${JSON.stringify(raw)}: ${problem}`);
}

/**
 * `raw` made absolute against `cwd`, when it names an existing file or folder (`kind`); unset or
 * blank, undefined.
 *
 * @throws InvalidSettingError with `refusal(problem)`: no such file or folder, or the other kind.
 */
function existingPath(raw: string | undefined, cwd: string, kind: 'file' | 'folder', refusal: (problem: string) => string): string | undefined {
  const given = nonEmpty(raw);
  if (given === undefined) return undefined;
  const path = resolve(cwd, given);
  let problem: string | undefined;
  try {
    const stats = statSync(path);
    if (kind === 'file' ? !stats.isFile() : !stats.isDirectory()) problem = `it is not a ${kind}`;
  } catch (error) {
    problem = (error as NodeJS.ErrnoException).code === 'ENOENT' ? `no such ${kind}` : (error as Error).message;
  }
  if (problem !== undefined) throw new InvalidSettingError(refusal(problem));
  return path;
}
