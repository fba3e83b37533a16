import { z } from 'zod';
import { DEFAULT_TODO_BOUNDS, type TodoBounds } from './bounds';
import type { TodoPolicy } from './policy';
import { todoWriteArgsSchema } from './schema';

/** The tool's name, as models and every client see it. */
export const TODO_WRITE_TOOL_NAME = 'todo_write';

const HEAD =
  'Keep a structured plan of the current work and show progress on it. Every call must send the ENTIRE ' +
  'list: it REPLACES the previous list. There are no partial updates and no per-item edits; to change one ' +
  'todo, send the whole list again with that todo changed. Before starting multi-step work, add one todo ' +
  'per concrete step. ';

const PARALLEL_CLAUSE =
  'Mark every todo you are actively working on as in_progress; several may be in_progress at once when ' +
  'work runs concurrently (subagents, background jobs). Mark a todo completed as soon as it is done. ';

const SINGLE_CLAUSE =
  'Keep at most one todo in_progress at a time: finish it or set it back to pending before starting ' +
  'another. Mark a todo completed as soon as it is done. ';

const TAIL =
  'Each content is a short imperative line, unique within the list (contents that differ only in case, ' +
  'spacing or Unicode form count as the same). Skip the list entirely for trivial single-step tasks.';

/**
 * The tool description a model reads. Only the active-status clause depends on the policy; the
 * rest is word for word the same in every deployment.
 */
export function describeTodoWrite(policy: TodoPolicy): string {
  return HEAD + (policy.allowParallelInProgress ? PARALLEL_CLAUSE : SINGLE_CLAUSE) + TAIL;
}

/** An OpenAI-compatible function tool definition (`tools: [...]` in a chat completion request). */
export interface TodoWriteToolDefinition {
  type: 'function';
  function: {
    name: typeof TODO_WRITE_TOOL_NAME;
    description: string;
    parameters: Record<string, unknown>;
  };
}

/**
 * The `todo_write` function definition, its JSON Schema generated from the same zod schema the
 * workflow validates with, so what the model is shown and what is enforced cannot drift apart.
 */
export function todoWriteToolDefinition(
  policy: TodoPolicy,
  bounds: TodoBounds = DEFAULT_TODO_BOUNDS,
): TodoWriteToolDefinition {
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(todoWriteArgsSchema(bounds)) as Record<string, unknown>;
  return {
    type: 'function',
    function: { name: TODO_WRITE_TOOL_NAME, description: describeTodoWrite(policy), parameters },
  };
}
