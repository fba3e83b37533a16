import { InvalidSettingError } from '../client/errors';
import { POLICY_SETTING, type TodoPolicy } from '../todo/policy';
import { booleanSetting } from './setting-values';

/** The flag and the environment variable that carry the parallel policy. */
export const POLICY_FLAG = '--allow-parallel-in-progress';
export const POLICY_ENV = 'ALLOW_PARALLEL_IN_PROGRESS';

/**
 * The parallel policy from the flag, else from `ALLOW_PARALLEL_IN_PROGRESS`; `undefined` when
 * neither is set (it has no default: a command that needs it asks with {@link requirePolicy}).
 * Only `true` and `false` are accepted: a deployment choice is never guessed from `yes`, `1`.
 * A flag given with an empty value is a missing policy, not an absent flag.
 *
 * @throws InvalidSettingError naming the flag or the variable whose value is malformed, or
 *   the missing setting when the flag was given empty.
 */
export function policySetting(flag: string | undefined, env: NodeJS.ProcessEnv): TodoPolicy | undefined {
  if (flag !== undefined && flag.trim() === '') throw missingPolicy();
  const allowParallelInProgress = flag !== undefined ? booleanSetting(POLICY_FLAG, flag) : booleanSetting(POLICY_ENV, env[POLICY_ENV]);
  return allowParallelInProgress === undefined ? undefined : { allowParallelInProgress };
}

/**
 * The policy, for a command that cannot run without one.
 *
 * @throws InvalidSettingError naming the missing setting and how to give it.
 */
export function requirePolicy(policy: TodoPolicy | undefined): TodoPolicy {
  if (policy === undefined) throw missingPolicy();
  return policy;
}

function missingPolicy(): InvalidSettingError {
  return new InvalidSettingError(
    `missing setting ${POLICY_SETTING}: pass ${POLICY_FLAG} <true|false> or set ${POLICY_ENV}=true|false ` +
      '(true: several todos may be in_progress at once; false: at most one). It is a deployment choice with no default.',
  );
}
