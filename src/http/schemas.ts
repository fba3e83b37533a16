import { z } from '@hono/zod-openapi';
import { todoStatusSchema, todoWriteArgsSchema, type TodoBounds } from '../todo';

/**
 * Response and request schemas of the HTTP API, for the OpenAPI document. The `todo_write`
 * body is the very schema the workflow validates with; the others describe what the session
 * query and the client return.
 */
export function apiSchemas(bounds?: TodoBounds) {
  const todoItem = z.object({ content: z.string(), status: todoStatusSchema }).openapi('TodoItem');
  const todoList = z.array(todoItem).nullable().openapi('TodoList', { description: 'The current list, or null when the current turn has none.' });
  const counts = z
    .object({ pending: z.number().int(), in_progress: z.number().int(), completed: z.number().int() })
    .openapi('TodoCounts');
  const child = z
    .object({ name: z.string(), sessionId: z.string(), task: z.string().nullable(), closed: z.boolean(), counts: counts.nullable() })
    .openapi('ChildSession');
  const session = z
    .object({
      sessionId: z.string(),
      turn: z.number().int(),
      turnOpen: z.boolean(),
      todos: todoList,
      counts,
      version: z.number().int().openapi({ description: 'Grows by one with every applied event.' }),
      closed: z.boolean(),
      parent: z.object({ sessionId: z.string(), name: z.string() }).nullable(),
      task: z.string().nullable(),
      children: z.array(child),
      updatedAt: z.string().nullable(),
    })
    .openapi('Session');
  const writeResult = z
    .object({
      pending: z.number().int(),
      in_progress: z.number().int(),
      completed: z.number().int(),
      message: z.string().openapi({ example: 'Updated todo list: 2 pending, 1 in progress, 0 completed' }),
      version: z.number().int(),
    })
    .openapi('TodoWriteResult');
  const tree = z
    .object({ id: z.string(), todos: todoList, counts, children: z.array(z.object({}).passthrough().openapi({ description: 'A SessionTree, recursively.' })) })
    .openapi('SessionTree');
  const listing = z
    .object({
      id: z.string(),
      status: z.enum(['running', 'closed']),
      parent: z.string().nullable(),
      counts: counts.nullable(),
      version: z.number().int().nullable(),
      updatedAt: z.string(),
    })
    .openapi('SessionListing');
  const error = z
    .object({
      error: z.string().openapi({ description: 'One sentence saying what happened and what to change.' }),
      code: z.string().openapi({ description: 'What kind of failure it is, to branch on (never the sentence): rejected, session-not-found, outcome-unknown, …', example: 'rejected' }),
      rule: z.string().optional(),
      problems: z.array(z.object({ rule: z.string(), path: z.string(), detail: z.string() })).optional(),
      updateId: z.string().optional().openapi({ description: 'For a change sent but not answered: send it again with Idempotency-Key: <updateId> to apply it at most once.' }),
    })
    .openapi('Error');
  const start = z.object({ id: z.string().min(1), task: z.string().optional() }).openapi('StartSession');
  const started = z.object({ sessionId: z.string(), runId: z.string(), created: z.boolean() }).openapi('Started');
  const spawn = z.object({ name: z.string(), task: z.string().optional() }).openapi('SpawnSubagent');
  const spawned = z.object({ sessionId: z.string(), name: z.string() }).openapi('Subagent');
  const timeline = z
    .object({
      steps: z.array(
        z.object({
          eventId: z.number().int(),
          time: z.string().nullable(),
          type: z.string(),
          run: z.number().int(),
          todos: todoList,
          version: z.number().int(),
          turn: z.number().int(),
          turnOpen: z.boolean(),
        }),
      ),
    })
    .openapi('Timeline');
  return {
    todoItem,
    todoList,
    counts,
    session,
    writeResult,
    tree,
    listing,
    error,
    start,
    started,
    spawn,
    spawned,
    timeline,
    todoWrite: todoWriteArgsSchema(bounds).openapi('TodoWriteArgs'),
  };
}
