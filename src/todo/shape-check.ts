import type { TodoBounds } from './bounds';
import { isTodoStatus, TODO_STATUSES } from './todo-item';

/**
 * One way the arguments break the shape of `todo_write` (DESIGN §2, step 1), in the terms the
 * zod schema of `schema.ts` uses for the same failure: the two are held to each other by a
 * property test, so the tool definition (from zod) and the check (this file) cannot drift.
 */
export type ShapeIssue =
  | { code: 'invalid_type'; path: PropertyKey[]; expected: 'object' | 'array' | 'string' }
  | { code: 'unrecognized_keys'; path: PropertyKey[]; keys: string[] }
  | { code: 'invalid_value'; path: PropertyKey[]; values: readonly string[] }
  | { code: 'too_big'; path: PropertyKey[]; origin: 'array' | 'string'; maximum: number };

const ROOT_KEYS = ['todos'];
const ITEM_KEYS = ['content', 'status'];

/**
 * The shape check of `todo_write`'s arguments, written by hand so the workflow carries no
 * schema library: the session workflow evaluates its modules for every new session and every
 * replayed history. Reports what zod reports for `todoWriteArgsSchema(bounds)`, in the same
 * order: a known property's problems before unknown properties; a list over the bound is
 * reported without looking at its items; `content` before `status`.
 *
 * @returns every issue found, none when the shape is right.
 */
export function checkShape(args: unknown, bounds: TodoBounds): ShapeIssue[] {
  const issues: ShapeIssue[] = [];
  if (!isObject(args)) return [{ code: 'invalid_type', path: [], expected: 'object' }];
  const todos = (args as Record<string, unknown>).todos;
  if (!Array.isArray(todos)) {
    issues.push({ code: 'invalid_type', path: ['todos'], expected: 'array' });
  } else if (todos.length > bounds.maxItems) {
    issues.push({ code: 'too_big', path: ['todos'], origin: 'array', maximum: bounds.maxItems });
  } else {
    // An indexed loop: a sparse array's holes are items too (undefined, not objects).
    for (let index = 0; index < todos.length; index++) itemIssues(todos[index], index, bounds, issues);
  }
  unknownKeys(args, ROOT_KEYS, [], issues);
  return issues;
}

function itemIssues(item: unknown, index: number, bounds: TodoBounds, issues: ShapeIssue[]): void {
  const path = ['todos', index];
  if (!isObject(item)) {
    issues.push({ code: 'invalid_type', path, expected: 'object' });
    return;
  }
  const { content, status } = item as Record<string, unknown>;
  if (typeof content !== 'string') issues.push({ code: 'invalid_type', path: [...path, 'content'], expected: 'string' });
  else if (codePoints(content) > bounds.maxContentLength) {
    issues.push({ code: 'too_big', path: [...path, 'content'], origin: 'string', maximum: bounds.maxContentLength });
  }
  if (!isTodoStatus(status)) issues.push({ code: 'invalid_value', path: [...path, 'status'], values: TODO_STATUSES });
  unknownKeys(item, ITEM_KEYS, path, issues);
}

function unknownKeys(value: object, allowed: readonly string[], path: PropertyKey[], issues: ShapeIssue[]): void {
  const keys: string[] = [];
  // for…in, as the schema library does: inherited enumerable properties count too.
  for (const key in value) if (!allowed.includes(key)) keys.push(key);
  if (keys.length > 0) issues.push({ code: 'unrecognized_keys', path, keys });
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Length in Unicode code points, as JSON Schema's `maxLength` counts (an emoji is one). */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
