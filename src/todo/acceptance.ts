import { isBlank } from './blank-text';
import { DEFAULT_TODO_BOUNDS, type TodoBounds } from './bounds';
import type { TodoPolicy } from './policy';
import { describeValue, formatPath, Rejection, type RejectionProblem, type RejectionRule } from './rejection';
import { checkShape, type ShapeIssue } from './shape-check';
import type { TodoItem } from './todo-item';
import { jsonUtf8Length } from './utf8';

/**
 * Runs every acceptance check of `todo_write` on raw tool arguments, in the order of DESIGN §2:
 * shape, values, policy, bounds. Returns the list exactly as it will be logged.
 *
 * Content must arrive trimmed: the update's input *is* the log entry, so an untrimmed content
 * is refused rather than silently rewritten. Client-side callers trim first with
 * {@link trimTodoWriteArgs}, which is what the tool layer of this project does.
 *
 * @throws Rejection naming every broken rule, with the index and offending value.
 * @example
 * acceptTodoWrite({ todos: [{ content: 'Run lint', status: 'pending' }] }, { allowParallelInProgress: false })
 */
export function acceptTodoWrite(
  args: unknown,
  policy: TodoPolicy,
  bounds: TodoBounds = DEFAULT_TODO_BOUNDS,
): TodoItem[] {
  const issues = checkShape(args, bounds);
  if (issues.length > 0) throw new Rejection(shapeProblems(issues, args));

  const todos = (args as { todos: TodoItem[] }).todos;
  const problems = valueProblems(todos);

  const active = todos.flatMap((todo, index) => (todo.status === 'in_progress' ? [index] : []));
  if (!policy.allowParallelInProgress && active.length > 1) {
    problems.push({
      rule: 'parallel-in-progress',
      path: 'todos',
      detail:
        `at most one todo may be in_progress at a time in this deployment (got ${active.length}: ` +
        `${listIndexes(active)}); keep one in_progress and mark the others pending`,
    });
  }

  const bytes = jsonUtf8Length(todos);
  if (bytes > bounds.maxListBytes) {
    problems.push({
      rule: 'list-too-large',
      path: 'todos',
      detail: `the list is ${bytes} bytes of JSON, more than the limit of ${bounds.maxListBytes}; shorten or merge todos`,
    });
  }

  if (problems.length > 0) throw new Rejection(problems);
  return todos.map(({ content, status }) => ({ content, status }));
}

/**
 * Trims every `content` string of raw tool arguments and leaves everything else untouched, so
 * that shape errors still reach the acceptance checks as sent. This is the tool layer's one
 * normalisation (DESIGN §2: the stored item holds the trimmed text).
 */
export function trimTodoWriteArgs(args: unknown): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const todos = (args as { todos?: unknown }).todos;
  if (!Array.isArray(todos)) return args;
  return {
    ...(args as Record<string, unknown>),
    todos: todos.map((item: unknown) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) return item;
      const content = (item as { content?: unknown }).content;
      return typeof content === 'string' ? { ...(item as Record<string, unknown>), content: content.trim() } : item;
    }),
  };
}

function valueProblems(todos: readonly TodoItem[]): RejectionProblem[] {
  const problems: RejectionProblem[] = [];
  const firstIndex = new Map<string, number>();
  const firstByKey = new Map<string, { index: number; content: string }>();
  todos.forEach(({ content }, index) => {
    const path = `todos[${index}].content`;
    const trimmed = content.trim();
    if (isBlank(content)) {
      problems.push({ rule: 'empty-content', path, detail: `${path} is empty after trimming (${describeValue(content)})` });
      return;
    }
    if (trimmed !== content) {
      problems.push({
        rule: 'untrimmed-content',
        path,
        detail: `${path} ${describeValue(content)} has leading or trailing whitespace; send it trimmed: ${describeValue(trimmed)}`,
      });
    }
    if (!content.isWellFormed()) {
      problems.push({ rule: 'malformed-unicode', path, detail: `${path} ${describeValue(content)} contains a lone surrogate (not well-formed Unicode)` });
    }
    const earlier = firstIndex.get(trimmed);
    if (earlier !== undefined) {
      problems.push({
        rule: 'duplicate-content',
        path,
        detail: `${path} ${describeValue(trimmed)} repeats todos[${earlier}].content; every content must be unique`,
      });
      return;
    }
    firstIndex.set(trimmed, index);
    const key = contentKey(trimmed);
    const similar = firstByKey.get(key);
    if (similar !== undefined) {
      problems.push({
        rule: 'near-duplicate-content',
        path,
        detail:
          `${path} ${describeValue(trimmed)} and todos[${similar.index}].content ${describeValue(similar.content)} differ only in case, ` +
          'spacing or Unicode form; one todo per step: merge them, or make them differ in words',
      });
    } else {
      firstByKey.set(key, { index, content: trimmed });
    }
  });
  return problems;
}

/**
 * What two contents are compared by for near-duplicates: Unicode compatibility normalisation
 * (NFKC: full-width letters, ligatures, composed and decomposed accents become one form), case
 * folding (upper- then lower-casing also folds `ß` and `SS` together), and every run of
 * whitespace as one space. An acceptance rule only, never part of the durable invariant, so
 * lists written before it existed keep replaying.
 *
 * @example contentKey('Run  LINT') === contentKey('run lint') // true
 */
export function contentKey(content: string): string {
  return content.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').replace(/\s+/gu, ' ');
}

/** The sentences of the shape issues, each naming its place and the value found there. */
export function shapeProblems(issues: readonly ShapeIssue[], args: unknown): RejectionProblem[] {
  return issues.map((issue) => {
    const path = formatPath(issue.path);
    const got = valueAt(args, issue.path);
    let rule: RejectionRule = 'shape';
    let detail = '';
    switch (issue.code) {
      case 'unrecognized_keys': {
        const where = issue.path.length === 0 ? 'the arguments' : path;
        const allowed = issue.path.length === 0 ? '"todos"' : '"content" and "status"';
        const verb = issue.path.length === 0 || issue.keys.length > 1 ? 'have' : 'has';
        const noun = issue.keys.length === 1 ? 'an unknown property' : 'unknown properties';
        // Key names are the sender's text: cut each and list ten, so the message stays small.
        const keys = issue.keys.slice(0, 10).map((k) => describeValue(k));
        if (issue.keys.length > keys.length) keys.push(`…and ${issue.keys.length - keys.length} more`);
        detail = `${where} ${verb} ${noun} ${keys.join(', ')}; only ${allowed} ${issue.path.length === 0 ? 'is' : 'are'} allowed`;
        break;
      }
      case 'invalid_type':
        detail =
          issue.path.length === 0
            ? `the arguments must be an object {"todos": [...]}, got ${describeValue(got)}`
            : `${path} must be ${article(issue.expected)}, got ${got === undefined ? 'nothing (missing)' : describeValue(got)}`;
        break;
      case 'invalid_value':
        detail = `${path} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(got)}`;
        break;
      case 'too_big':
        if (issue.origin === 'array') {
          rule = 'too-many-items';
          detail = `the list has ${Array.isArray(got) ? got.length : '?'} todos, more than the limit of ${String(issue.maximum)}`;
        } else {
          rule = 'content-too-long';
          detail = `${path} is ${typeof got === 'string' ? [...got].length : '?'} characters, more than the limit of ${String(issue.maximum)}`;
        }
        break;
    }
    return { rule, path, detail };
  });
}

/** `todos[0], todos[3]`, cut after ten so a huge list cannot flood the message. */
function listIndexes(indexes: readonly number[]): string {
  const shown = indexes.slice(0, 10).map((i) => `todos[${i}]`);
  if (indexes.length > shown.length) shown.push(`…and ${indexes.length - shown.length} more`);
  return shown.join(', ');
}

function article(expected: string): string {
  if (expected === 'array') return 'an array';
  if (expected === 'object') return 'an object';
  return `a ${expected}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    if (!Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
