import { describeValue } from './rejection';
import { isTodoStatus, type TodoItem } from './todo-item';

/**
 * Thrown when a logged or carried list breaks the durable invariant. Inside a workflow this
 * deliberately fails the workflow task instead of being handled: a history that breaks the
 * invariant must stop loudly, naming the event, and is never repaired.
 */
export class InvariantViolation extends Error {
  override readonly name = 'InvariantViolation';
  /** Where the list came from, e.g. `todo/write at event 12`. */
  readonly where: string;

  constructor(where: string, detail: string) {
    super(`durable todo invariant broken by ${where}: ${detail}`);
    this.where = where;
  }
}

/**
 * The durable invariant (DESIGN §5), true of every list in history under any deployment:
 * an array of objects with exactly `content` and `status`, each `content` a non-empty string
 * equal to its own trim and unique, each `status` one of the enum.
 *
 * Deliberately silent on how many todos are `in_progress`: that is the deployment's policy,
 * and tying the invariant to today's policy would reject history that was valid when written.
 *
 * @param where names the event or state being checked, for the message.
 * @throws InvariantViolation naming `where`, the index and the offending value.
 */
export function assertTodoInvariant(value: unknown, where: string): asserts value is TodoItem[] {
  if (!Array.isArray(value)) throw new InvariantViolation(where, `todos must be an array, got ${describeValue(value)}`);
  const seen = new Set<string>();
  // An indexed loop, not forEach: a sparse array's holes must fail as non-objects, not be skipped.
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new InvariantViolation(where, `todos[${index}] must be an object, got ${describeValue(item)}`);
    }
    const extra = Object.keys(item).filter((key) => key !== 'content' && key !== 'status');
    if (extra.length > 0) {
      throw new InvariantViolation(where, `todos[${index}] has properties other than content and status: ${extra.join(', ')}`);
    }
    const { content, status } = item as Record<string, unknown>;
    if (typeof content !== 'string' || content.length === 0 || content.trim() !== content) {
      throw new InvariantViolation(
        where,
        `todos[${index}].content must be a non-empty, already trimmed string, got ${describeValue(content)}`,
      );
    }
    if (seen.has(content)) throw new InvariantViolation(where, `todos[${index}].content repeats ${describeValue(content)}`);
    seen.add(content);
    if (!isTodoStatus(status)) {
      throw new InvariantViolation(where, `todos[${index}].status must be pending, in_progress or completed, got ${describeValue(status)}`);
    }
  }
}
