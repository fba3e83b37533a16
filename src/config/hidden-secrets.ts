/** What a hidden secret reads as in serialized settings. */
export const HIDDEN = '[hidden]';

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * Makes `section` serialize without its secrets: `JSON.stringify` and `util.inspect` (and so
 * `console.log`) show `show(section)` instead of the section itself, through two
 * non-enumerable methods. The fields themselves are untouched, so the section can still be
 * passed as it is (or spread) to what needs the secret, such as a connection.
 */
export function hideSecrets<T extends object>(section: T, show: (section: T) => Record<string, unknown>): T {
  Object.defineProperty(section, 'toJSON', { value: () => show(section), enumerable: false });
  Object.defineProperty(section, INSPECT, { value: () => show(section), enumerable: false });
  return section;
}
