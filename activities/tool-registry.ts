import { z } from 'zod';
import { MAX_TASK_LENGTH } from '../src/session';
import { DEFAULT_TODO_BOUNDS, TODO_WRITE_TOOL_NAME, todoWriteArgsSchema, todoWriteToolDefinition, type TodoPolicy } from '../src/todo';
import type { ToolDefinition, ToolOutcome, ToolPlace } from './agent-contract';
import { InvalidSettingError } from '../src/client/errors';
import type { PreparedUserTool } from './user-tools';
import { listWorkspaceFiles, MAX_LIST_ENTRIES, MAX_READ_BYTES, readWorkspaceFile } from './workspace-tools';

/** What a worker tool is given besides its arguments. */
export interface ToolContext {
  sessionId: string;
  callId: string;
  /** Aborted when the call is cancelled; absent outside an activity. */
  signal?: AbortSignal;
  /** Heartbeats the activity running the call; absent outside an activity. */
  heartbeat?: (details?: unknown) => void;
}

/**
 * A tool the model may call. `session` tools are carried out by the session itself (the loop
 * sends them to the session's own updates); `worker` tools run here, through {@link run}.
 */
export interface AgentTool<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** The arguments' schema: what the model is shown (as JSON Schema) and, for worker tools, what parses them. */
  schema: Schema;
  place: ToolPlace;
  run?(args: z.output<Schema>, context: ToolContext): Promise<ToolOutcome>;
  /** The JSON Schema the model is shown, when it is not generated from {@link schema} (a user's tool given one). */
  parameters?: Record<string, unknown>;
  /** Where the tool comes from: `built-in`, or the user's tools module. */
  source?: string;
}

/** The name of the tool that starts a subagent. */
export const SPAWN_SUBAGENT_TOOL_NAME = 'spawn_subagent';

/** The arguments of `spawn_subagent`; the name's rules are the `subagent/spawn` validator's. */
export const spawnSubagentArgsSchema = z.strictObject({
  name: z
    .string()
    .describe('A short name for the subagent, unique in this session: 1-64 letters, digits, ".", "_" or "-", e.g. "tests".'),
  task: z
    .string()
    .min(1)
    .max(MAX_TASK_LENGTH)
    .describe('Everything the subagent needs to do its work on its own: it sees only this text, not this conversation.'),
});

const SPAWN_DESCRIPTION =
  'Hand a self-contained piece of work to a subagent: a new agent with its own todo list that works on the task ' +
  'and returns its final answer as this tool\'s result. Several spawns in one answer run at the same time. ' +
  'Use it for independent parts of a larger job; do small things yourself.';

const readFileArgsSchema = z.strictObject({
  path: z.string().describe('The file, relative to the workspace folder, e.g. "README.md" or "src/index.ts".'),
});

const listFilesArgsSchema = z.strictObject({
  path: z.string().optional().describe('The folder, relative to the workspace folder; the workspace itself when left out.'),
});

/** What the worker's tools are built from. */
export interface ToolRegistryOptions {
  policy: TodoPolicy;
  /** The folder the file tools work in; without one, `read_file` and `list_files` are not offered. */
  workspace?: string;
  /** The user's own tools (`--tools ./tools.mjs`), each run by the worker like the file tools. */
  userTools?: readonly PreparedUserTool[];
  /** The module the user's tools came from, for messages. */
  userToolsSource?: string;
}

/**
 * The tools of this worker: `todo_write` and `spawn_subagent` (carried out by the session),
 * and, with a workspace, `read_file` and `list_files` (run by the worker, confined to it).
 */
export class ToolRegistry {
  readonly tools: readonly AgentTool[];

  constructor(options: ToolRegistryOptions) {
    const tools: AgentTool[] = [
      {
        name: TODO_WRITE_TOOL_NAME,
        description: todoWriteToolDefinition(options.policy).function.description,
        schema: todoWriteArgsSchema(DEFAULT_TODO_BOUNDS),
        place: 'session',
      },
      { name: SPAWN_SUBAGENT_TOOL_NAME, description: SPAWN_DESCRIPTION, schema: spawnSubagentArgsSchema, place: 'session' },
    ];
    const workspace = options.workspace;
    if (workspace !== undefined) {
      tools.push(
        workerTool({
          name: 'read_file',
          description: `Read a text file of the workspace folder (at most ${MAX_READ_BYTES / 1024} KiB are returned; paths are relative to the workspace).`,
          schema: readFileArgsSchema,
          run: ({ path }) => readWorkspaceFile(workspace, path),
        }),
        workerTool({
          name: 'list_files',
          description: `List a folder of the workspace (folders end in "/", symbolic links in "@"; at most ${MAX_LIST_ENTRIES} entries).`,
          schema: listFilesArgsSchema,
          run: ({ path }) => listWorkspaceFiles(workspace, path),
        }),
      );
    }
    for (const user of options.userTools ?? []) {
      const clash = tools.find((tool) => tool.name === user.name);
      if (clash !== undefined) {
        throw new InvalidSettingError(`the tool ${JSON.stringify(user.name)} of ${options.userToolsSource ?? 'the tools module'} has the name of the built-in tool ${clash.name}: rename it`);
      }
      tools.push({
        name: user.name,
        description: user.description,
        schema: user.schema,
        parameters: user.parameters,
        place: 'worker',
        source: options.userToolsSource ?? 'module',
        run: (args, context) =>
          user.run(args, {
            sessionId: context.sessionId,
            callId: context.callId,
            signal: context.signal ?? new AbortController().signal,
            heartbeat: context.heartbeat ?? (() => undefined),
          }),
      });
    }
    this.tools = tools;
  }

  /** The tool named `name`, if this worker has it. */
  get(name: string): AgentTool | undefined {
    return this.tools.find((tool) => tool.name === name);
  }

  /** The tools as OpenAI function definitions, in registry order. */
  definitions(): ToolDefinition[] {
    return this.tools.map(toolDefinition);
  }

  /** Where each tool runs, by name. */
  places(): Record<string, ToolPlace> {
    return Object.fromEntries(this.tools.map((tool) => [tool.name, tool.place]));
  }

  /**
   * Runs a worker tool with the model's arguments (JSON text). Every problem — an unknown or
   * session tool, arguments that are not JSON or break the schema, a failure of the tool — is a
   * result the model reads and can act on, never a thrown error.
   */
  async run(name: string, argumentsText: string, context: ToolContext): Promise<ToolOutcome> {
    const tool = this.get(name);
    if (tool === undefined || tool.place !== 'worker' || tool.run === undefined) {
      const offered = this.tools.filter((t) => t.place === 'worker').map((t) => t.name);
      return { ok: false, content: `${name}: this worker runs no such tool${offered.length > 0 ? `; its tools are ${offered.join(', ')}` : ''}` };
    }
    const parsed = parseToolArguments(tool, argumentsText);
    if (!parsed.ok) return parsed;
    try {
      return await tool.run(parsed.value, context);
    } catch (error) {
      return { ok: false, content: `${name} failed: ${(error as Error).message}` };
    }
  }
}

/** A worker tool, typed by its schema. */
function workerTool<Schema extends z.ZodType>(tool: Omit<AgentTool<Schema>, 'place'> & Required<Pick<AgentTool<Schema>, 'run'>>): AgentTool {
  return { ...tool, place: 'worker' } as unknown as AgentTool;
}

/**
 * A tool's OpenAI function definition, its JSON Schema generated from the tool's own zod schema
 * (without `$schema`; objects closed with `additionalProperties: false`), so what the model is
 * shown and what parses its arguments cannot drift apart. `todo_write`'s is the one
 * `todoWriteToolDefinition` makes, built the same way.
 */
export function toolDefinition(tool: AgentTool): ToolDefinition {
  if (tool.parameters !== undefined) return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(tool.schema) as Record<string, unknown>;
  if (parameters.type === 'object') parameters.additionalProperties = false;
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters } };
}

/**
 * Parses a tool call's arguments (the JSON text the model sent) with the tool's schema.
 *
 * @returns the parsed value, or the outcome that tells the model what to fix.
 */
export function parseToolArguments<T>(tool: Pick<AgentTool, 'name'> & { schema: z.ZodType<T> }, argumentsText: string): { ok: true; value: T } | (ToolOutcome & { ok: false }) {
  let json: unknown;
  try {
    json = argumentsText.trim() === '' ? {} : JSON.parse(argumentsText);
  } catch (error) {
    return { ok: false, content: `${tool.name}: the arguments are not valid JSON (${(error as Error).message}); send a JSON object` };
  }
  const parsed = tool.schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'arguments'}: ${issue.message}`);
  return { ok: false, content: `${tool.name}: invalid arguments: ${problems.join('; ')}` };
}
