import { z } from 'zod';
import { NOT_BLANK_PATTERN } from './blank-text';
import { DEFAULT_TODO_BOUNDS, type TodoBounds } from './bounds';
import type { ShapeIssue } from './shape-check';
import { TODO_STATUSES } from './todo-item';

/** The status enum as a zod schema. */
export const todoStatusSchema = z.enum(TODO_STATUSES);

/**
 * The argument schema of `todo_write`, strict at every level: an unknown property is an error,
 * never dropped, because the logged snapshot must equal what the model believes it wrote.
 * The bounds are part of the schema so the JSON Schema a model is shown carries them too, and so
 * is the rule that a content is not blank (its `pattern`: stated, not checked here, because the
 * acceptance checks judge it with the same pattern and name it `empty-content`).
 */
export function todoWriteArgsSchema(bounds: TodoBounds = DEFAULT_TODO_BOUNDS) {
  const item = z.strictObject({
    content: z
      .string()
      .max(bounds.maxContentLength)
      .meta({ pattern: NOT_BLANK_PATTERN, description: 'What the task is: a short imperative line, unique within the list.' }),
    status: todoStatusSchema.describe('pending, in_progress (being worked on now) or completed.'),
  });
  return z.strictObject({
    todos: z
      .array(item)
      .max(bounds.maxItems)
      .describe('The COMPLETE task list. It replaces the previous list entirely.'),
  });
}

/** The argument object of `todo_write`: exactly what a model sends as the tool's arguments. */
export type TodoWriteArgs = z.infer<ReturnType<typeof todoWriteArgsSchema>>;

/**
 * The shape issues zod finds for `todoWriteArgsSchema(bounds)`, in the terms of
 * {@link ShapeIssue}: the reference the hand-written `checkShape` is held to by a property
 * test (the workflow runs `checkShape`, so its bundle carries no zod).
 */
export function zodShapeIssues(args: unknown, bounds: TodoBounds = DEFAULT_TODO_BOUNDS): ShapeIssue[] {
  const parsed = todoWriteArgsSchema(bounds).safeParse(args);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue): ShapeIssue => {
    const path = [...issue.path];
    switch (issue.code) {
      case 'invalid_type':
        return { code: 'invalid_type', path, expected: issue.expected as 'object' | 'array' | 'string' };
      case 'unrecognized_keys':
        return { code: 'unrecognized_keys', path, keys: [...issue.keys] };
      case 'invalid_value':
        return { code: 'invalid_value', path, values: issue.values.map(String) };
      case 'too_big':
        return { code: 'too_big', path, origin: issue.origin as 'array' | 'string', maximum: Number(issue.maximum) };
      default:
        throw new Error(`zod reported an issue the shape check does not know: ${issue.code} at ${path.join('.')}`);
    }
  });
}
