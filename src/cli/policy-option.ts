import { InvalidSettingError } from '../client/errors';
import { POLICY_SETTING, type TodoPolicy } from '../todo';

/** The flag and the environment variable that carry the parallel policy. */
export const POLICY_FLAG = '--allow-parallel-in-progress';
export const POLICY_ENV = 'ALLOW_PARALLEL_IN_PROGRESS';

/** A usage error that must end the process with exit code 2 (missing or malformed setting). */
export class UsageError extends InvalidSettingError {
  override readonly name = 'UsageError';
}

/**
 * Reads the policy from the flag, else from `ALLOW_PARALLEL_IN_PROGRESS`. Only `true` and
 * `false` are accepted: a deployment choice is never guessed from `yes`, `1` or an empty value.
 *
 * @throws UsageError naming the missing or malformed setting.
 */
export function policyFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): TodoPolicy {
  const fromFlag = flag !== undefined;
  const raw = fromFlag ? flag : env[POLICY_ENV];
  if (raw === undefined || raw.trim() === '') {
    throw new UsageError(
      `missing setting ${POLICY_SETTING}: pass ${POLICY_FLAG} <true|false> or set ${POLICY_ENV}=true|false ` +
        '(true: several todos may be in_progress at once; false: at most one). It is a deployment choice with no default.',
    );
  }
  const value = raw.trim().toLowerCase();
  if (value !== 'true' && value !== 'false') {
    throw new UsageError(
      `${fromFlag ? POLICY_FLAG : POLICY_ENV} must be true or false, got ${JSON.stringify(raw)}`,
    );
  }
  return { allowParallelInProgress: value === 'true' };
}
