import { InvalidSettingError } from '../client/errors';

/** The flag and the environment variable that carry the parallel policy (read by `loadSettings`). */
export { POLICY_ENV, POLICY_FLAG, requirePolicy } from '../config';

/** A usage error that must end the process with exit code 2 (missing or malformed setting). */
export class UsageError extends InvalidSettingError {
  override readonly name = 'UsageError';
}
