import { z } from 'zod';
import type { ToolOutcome } from './agent-contract';

/** What a user's tool is given beside its arguments. */
export interface UserToolContext {
  sessionId: string;
  /** The model's id of the call. */
  callId: string;
  /** Aborted when the call is cancelled (an `interrupt`) or the worker shuts down: stop then. */
  signal: AbortSignal;
  /** Tells Temporal the call is alive (the activity heartbeats every second anyway); `details` are kept for a retry. */
  heartbeat(details?: unknown): void;
}

/**
 * A tool of the user's own, as a tools module's default export lists them
 * (`agent-sessions worker --tools ./tools.mjs`, or `createWorker({ tools })`):
 *
 * @example
 * export default [{
 *   name: 'word_count',
 *   description: 'Count the words of a text.',
 *   parameters: z.object({ text: z.string() }),   // or a JSON Schema object
 *   run: ({ text }) => String(text.split(/\s+/).filter(Boolean).length),
 * }];
 */
export interface UserTool {
  name: string;
  description: string;
  /** A zod schema of the arguments, or a JSON Schema of them (an object schema). */
  parameters: z.ZodType | Record<string, unknown>;
  /** A string is the tool result as it is; any other JSON value is given to the model as JSON; a throw is a failed call the model reads. */
  run(args: never, context: UserToolContext): unknown;
}

/** A user's tool checked and made ready: its schema for parsing, its JSON Schema for the model. */
export interface PreparedUserTool {
  name: string;
  description: string;
  schema: z.ZodType;
  parameters: Record<string, unknown>;
  run(args: unknown, context: UserToolContext): Promise<ToolOutcome>;
}

/** What OpenAI-compatible APIs accept as a function name. */
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Checks the tools a module exports (`source` names it in messages) and prepares them: each has a
 * function name an OpenAI-compatible API accepts (not `mcp__…`, which names MCP servers' tools),
 * a description, parameters that are a zod schema or an object JSON Schema, and a `run`; no name
 * repeats.
 *
 * @throws Error in one sentence naming the module, the tool and what is wrong.
 */
export function prepareUserTools(exported: unknown, source: string): PreparedUserTool[] {
  const fail = (detail: string): never => {
    throw new Error(`the tools module ${source}: ${detail}`);
  };
  if (!Array.isArray(exported)) fail(`its default export must be a list of tools [{ name, description, parameters, run }], got ${describe(exported)}`);
  const seen = new Set<string>();
  return (exported as unknown[]).map((entry, index) => {
    const tool = entry as Partial<UserTool> | null;
    const place = `tool ${index + 1}${typeof tool?.name === 'string' ? ` (${JSON.stringify(tool.name)})` : ''}`;
    if (typeof tool !== 'object' || tool === null) fail(`${place} must be an object { name, description, parameters, run }`);
    const { name, description, parameters, run } = tool!;
    if (typeof name !== 'string' || !FUNCTION_NAME.test(name)) fail(`${place}: name must be 1-64 letters, digits, _ or -, got ${describe(name)}`);
    if (name!.startsWith('mcp__')) fail(`${place}: names starting with mcp__ belong to MCP servers' tools`);
    if (seen.has(name!)) fail(`${place}: the name ${JSON.stringify(name)} is used twice`);
    seen.add(name!);
    if (typeof description !== 'string' || description.trim() === '') fail(`${place}: description must be a non-empty string`);
    if (typeof run !== 'function') fail(`${place}: run must be a function (args, { sessionId, callId, signal, heartbeat })`);
    const { schema, json } = schemaOf(parameters, (detail) => fail(`${place}: ${detail}`));
    const call = run as (args: unknown, context: UserToolContext) => unknown;
    return {
      name: name!,
      description: description!,
      schema,
      parameters: json,
      async run(args, context) {
        try {
          const result = await call(args, context);
          return { ok: true, content: typeof result === 'string' ? result : (JSON.stringify(result) ?? 'null') };
        } catch (error) {
          if (context.signal.aborted) throw error;
          return { ok: false, content: `${name} failed: ${error instanceof Error ? error.message : String(error)}` };
        }
      },
    };
  });
}

/** The zod schema that parses a tool's arguments and the JSON Schema the model is shown, from either one. */
function schemaOf(parameters: unknown, fail: (detail: string) => never): { schema: z.ZodType; json: Record<string, unknown> } {
  // Duck-typed: a module may bring its own copy of zod 4, whose classes are not ours.
  if (isZodSchema(parameters)) {
    const { $schema: _dialect, ...json } = z.toJSONSchema(parameters) as Record<string, unknown>;
    if (json.type !== 'object') fail('parameters must describe an object (z.object({...}))');
    return { schema: parameters, json };
  }
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) fail('parameters must be a zod schema or a JSON Schema object');
  const { $schema: _dialect, ...json } = parameters as Record<string, unknown>;
  if (json.type !== 'object') fail(`parameters must be an object schema ({"type": "object", ...}), got type ${describe(json.type)}`);
  try {
    return { schema: z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]), json };
  } catch (error) {
    return fail(`parameters is not a JSON Schema zod can check arguments with: ${(error as Error).message}`);
  }
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value && typeof (value as { safeParse?: unknown }).safeParse === 'function';
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'function' ? 'a function' : JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
