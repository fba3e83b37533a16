import { describeValue } from './rejection';

/**
 * The deployment's parallel policy. Required, with no default: whether several todos may be
 * `in_progress` at once is a choice each deployment makes when it assembles its workers.
 * It is read only when a write is accepted and when the tool description is written, never by
 * anything that replays.
 */
export interface TodoPolicy {
  /** `true` for agents that work concurrently (subagents, background jobs, fan-out). */
  allowParallelInProgress: boolean;
}

/** The name people and programs use for the policy setting, in flags, env and messages. */
export const POLICY_SETTING = 'allowParallelInProgress';

/**
 * Checks that a value carries the policy as a real boolean.
 *
 * @throws TypeError naming `allowParallelInProgress` when it is missing or not a boolean.
 */
export function assertTodoPolicy(value: unknown, where = 'the worker options'): asserts value is TodoPolicy {
  const setting =
    typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[POLICY_SETTING] : undefined;
  if (setting === undefined) {
    throw new TypeError(
      `${POLICY_SETTING} is required in ${where}: choose true (several todos may be in_progress at once) ` +
        'or false (at most one). It is a deployment choice and has no default.',
    );
  }
  if (typeof setting !== 'boolean') {
    throw new TypeError(`${POLICY_SETTING} in ${where} must be a boolean (true or false), got ${describeValue(setting)} (${typeof setting})`);
  }
}
