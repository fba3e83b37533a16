import { InvalidSettingError } from '../client/errors';

/**
 * How one raw setting is read. Every environment variable and flag goes through one of these,
 * so a value is understood the same way wherever it is set, and a bad one is refused with a
 * sentence that names the variable (or flag) and what it may be.
 */

/** The trimmed value, or `undefined` when it is unset or only whitespace (compose writes `VAR=` for an unset default). */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * `true` or `false` (case and surrounding spaces aside), or `undefined` when unset. Nothing else
 * is guessed: `yes`, `1` or `on` is refused.
 *
 * @throws InvalidSettingError naming `name`.
 */
export function booleanSetting(name: string, raw: string | undefined): boolean | undefined {
  const value = nonEmpty(raw)?.toLowerCase();
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new InvalidSettingError(`${name} must be true or false, got ${JSON.stringify(raw)}`);
  return value === 'true';
}

/**
 * A decimal integer within `[min, max]`, or `undefined` when unset.
 *
 * @param what what the number counts, said in the message (`applied events per run`).
 * @throws InvalidSettingError naming `name` and the range.
 */
export function integerSetting(name: string, raw: string | undefined, range: { min: number; max?: number }, what?: string): number | undefined {
  const text = nonEmpty(raw);
  if (text === undefined) return undefined;
  const value = /^\d{1,15}$/.test(text) ? Number(text) : NaN;
  const inRange = value >= range.min && (range.max === undefined || value <= range.max);
  if (!inRange) {
    const bounds = range.max === undefined ? `of at least ${range.min}` : `from ${range.min} to ${range.max}`;
    throw new InvalidSettingError(`${name} must be an integer ${bounds}${what !== undefined ? ` (${what})` : ''}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** The entries of a comma-separated list, trimmed, empty ones dropped (`a, b,` is `['a', 'b']`). */
export function listSetting(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}
