/**
 * The rules a write (or a spawn) can break. Each rejection names one, so a model (or a program)
 * can tell what to fix without parsing prose; a message names it as `[rule]`.
 */
export const REJECTION_RULES = [
  'shape',
  'empty-content',
  'untrimmed-content',
  'duplicate-content',
  'near-duplicate-content',
  'malformed-unicode',
  'too-many-items',
  'content-too-long',
  'list-too-large',
  'parallel-in-progress',
  'session-closed',
  'stale-version',
  'subagent-name',
  'subagent-exists',
  'subagent-id-taken',
  'empty-message',
  'message-too-long',
  'queue-full',
  'no-running-turn',
  'no-pending-call',
  'no-such-run',
  'no-such-event',
  'no-such-turn',
  'no-withheld-tool',
] as const;

/** One of {@link REJECTION_RULES}. */
export type RejectionRule = (typeof REJECTION_RULES)[number];

/** One broken rule at one place of the arguments. */
export interface RejectionProblem {
  rule: RejectionRule;
  /** Where, in the notation a person reads: `todos[2].content`, or `arguments` for the whole. */
  path: string;
  /** The sentence that says what is wrong there and with which value. */
  detail: string;
}

/** How many problems one message lists before summarising the rest. */
const LISTED_PROBLEMS = 10;

/**
 * Thrown when a request (a write, a spawn) breaks an acceptance rule. Pure domain error: the
 * workflow turns it into a Temporal `ApplicationFailure` (`TodoRejected` for a write,
 * `SpawnRejected` for a spawn), the client back into `TodoRejectedError` or
 * `SpawnRejectedError`. The message lists every problem found (up to ten), so one correction
 * can fix them all.
 */
export class Rejection extends Error {
  override readonly name = 'Rejection';
  /** The rule of the first problem. */
  readonly rule: RejectionRule;
  readonly problems: readonly RejectionProblem[];

  /**
   * @param message what was refused, the head of the message (`todo_write`, `subagent/spawn`).
   */
  constructor(problems: readonly RejectionProblem[], message = 'todo_write') {
    const first = problems[0];
    if (first === undefined) throw new RangeError('a Rejection needs at least one problem');
    // Paths and details quote the sender's input: keep each bounded whatever was sent.
    const bounded = problems.map((p) => ({ ...p, path: cut(p.path, 120), detail: cut(p.detail, 400) }));
    super(formatRejection(bounded, message));
    this.rule = first.rule;
    this.problems = bounded;
  }
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

function formatRejection(problems: readonly RejectionProblem[], message: string): string {
  const listed = problems.slice(0, LISTED_PROBLEMS).map((p) => `${p.detail} [${p.rule}]`);
  const more = problems.length - listed.length;
  if (more > 0) listed.push(`…and ${more} more problem${more === 1 ? '' : 's'}`);
  const head = problems.length === 1 ? `${message} rejected: ` : `${message} rejected (${problems.length} problems): `;
  return head + listed.join('; ');
}

/**
 * Renders a path such as `['todos', 2, 'content']` as `todos[2].content`.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'arguments';
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? 'arguments' : out;
}

/**
 * A short, exact rendering of an offending value for a message: JSON where possible, cut at
 * 80 characters so a 100,000-item list cannot flood the error.
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  let text: string;
  try {
    text = typeof value === 'bigint' ? `${value}n` : (JSON.stringify(value) ?? String(value));
  } catch {
    text = Object.prototype.toString.call(value);
  }
  if (Array.isArray(value)) text = `an array of ${value.length}: ${text}`;
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
