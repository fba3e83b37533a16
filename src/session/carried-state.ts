import { assertTodoInvariant, InvariantViolation } from '../todo/invariant';
import { describeValue } from '../todo/rejection';
import { LEGACY_RECENT_WRITES_KEPT, type LegacyWriteReceipt, type SessionState, type WriteReceipt } from './session-state';
import { IGNORED_SIGNALS_KEPT } from './ignored-signal';

const WHERE = 'the state carried into this run';

/**
 * Checks the one object a session carries across continue-as-new before the new run trusts it:
 * every field of {@link SessionState} with its type, the durable invariant on the list, unique
 * children, and at most {@link LEGACY_RECENT_WRITES_KEPT} receipts (compact, or as the first release carried them). `ignoredSignals` may be absent:
 * runs started before the list existed carried none (see {@link carriedState}).
 *
 * @param where names the state in a message (a fork's state is checked the same way).
 * @throws InvariantViolation naming the carried state and the field.
 */
export function assertCarriedState(value: unknown, where = WHERE): asserts value is SessionState {
  const fail = (detail: string): never => {
    throw new InvariantViolation(where, detail);
  };
  if (typeof value !== 'object' || value === null) fail(`it must be an object, got ${describeValue(value)}`);
  const state = value as Record<string, unknown>;
  for (const key of ['turn', 'version'] as const) {
    const n = state[key];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) fail(`${key} must be a non-negative integer, got ${describeValue(n)}`);
  }
  for (const key of ['turnOpen', 'closed'] as const) {
    if (typeof state[key] !== 'boolean') fail(`${key} must be a boolean, got ${describeValue(state[key])}`);
  }
  if (state.todos !== null) assertTodoInvariant(state.todos, where);
  if (state.updatedAt !== null && typeof state.updatedAt !== 'string') fail(`updatedAt must be a string or null, got ${describeValue(state.updatedAt)}`);
  if (!Array.isArray(state.children)) fail(`children must be an array, got ${describeValue(state.children)}`);
  const names = new Set<string>();
  for (const [index, child] of (state.children as unknown[]).entries()) {
    const c = child as Record<string, unknown> | null;
    if (typeof c !== 'object' || c === null || typeof c.name !== 'string' || typeof c.sessionId !== 'string' || typeof c.closed !== 'boolean') {
      fail(`children[${index}] must be {name, sessionId, task, closed, counts}, got ${describeValue(child)}`);
    }
    if (names.has(c!.name as string)) fail(`children[${index}] repeats the name ${describeValue(c!.name)}`);
    names.add(c!.name as string);
  }
  if (!Array.isArray(state.recentWrites) || state.recentWrites.length > LEGACY_RECENT_WRITES_KEPT) {
    fail(`recentWrites must be an array of at most ${LEGACY_RECENT_WRITES_KEPT} receipts`);
  }
  for (const [index, receipt] of (state.recentWrites as unknown[]).entries()) {
    if (!isReceipt(receipt) && !isLegacyReceipt(receipt)) {
      fail(`recentWrites[${index}] must be [updateId, version, pending, in_progress, completed], got ${describeValue(receipt)}`);
    }
  }
  const ignored = state.ignoredSignals;
  if (ignored === undefined) return;
  if (!Array.isArray(ignored) || ignored.length > IGNORED_SIGNALS_KEPT) fail(`ignoredSignals must be an array of at most ${IGNORED_SIGNALS_KEPT} entries`);
  for (const [index, entry] of (ignored as unknown[]).entries()) {
    const e = entry as Record<string, unknown> | null;
    if (typeof e !== 'object' || e === null || typeof e.name !== 'string' || typeof e.reason !== 'string' || (e.at !== null && typeof e.at !== 'string')) {
      fail(`ignoredSignals[${index}] must be {name, at, reason}, got ${describeValue(entry)}`);
    }
  }
}

/**
 * The carried state as the new run uses it, after {@link assertCarriedState}. A state carried
 * by a run of the first release lacks `ignoredSignals` (it starts empty) and holds its receipts
 * as `{updateId, result}` objects (they become compact receipts, answering the same).
 */
export function carriedState(state: SessionState): SessionState {
  const receipts = state.recentWrites as unknown[];
  const legacy = receipts.some(isLegacyReceipt);
  if (state.ignoredSignals !== undefined && !legacy) return state;
  return {
    ...state,
    ignoredSignals: state.ignoredSignals ?? [],
    recentWrites: receipts.map((receipt): WriteReceipt => {
      if (!isLegacyReceipt(receipt)) return receipt as WriteReceipt;
      const { updateId, result } = receipt;
      return [updateId, result.version, result.pending, result.in_progress, result.completed];
    }),
  };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function isReceipt(value: unknown): value is WriteReceipt {
  return Array.isArray(value) && value.length === 5 && typeof value[0] === 'string' && value.slice(1).every(isCount);
}

function isLegacyReceipt(value: unknown): value is LegacyWriteReceipt {
  const r = value as { updateId?: unknown; result?: Record<string, unknown> } | null;
  const result = r?.result;
  return (
    typeof r === 'object' && r !== null && typeof r.updateId === 'string' && typeof result === 'object' && result !== null &&
    isCount(result.version) && isCount(result.pending) && isCount(result.in_progress) && isCount(result.completed)
  );
}
