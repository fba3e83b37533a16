/**
 * The characters `String.prototype.trim` removes (ECMAScript's WhiteSpace and LineTerminator), as
 * the inside of a regular expression's character class, in escapes that ECMAScript and Python
 * read alike: a JSON Schema `pattern` built on it means the same to a client generating data in
 * Python as to this service. (`\s` would not: Python's holds U+001C–U+001F and lacks U+FEFF.)
 */
export const TRIMMED_CHARACTERS = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * JSON Schema `pattern` of a text that is not blank: it holds a character that trimming keeps.
 * The one statement of the rule: {@link isBlank} tests with it, and the documents that state the
 * rule (the tool's parameters, the HTTP API's) carry it.
 */
export const NOT_BLANK_PATTERN = `[^${TRIMMED_CHARACTERS}]`;

const NOT_BLANK = new RegExp(NOT_BLANK_PATTERN);

/**
 * Whether `text` is empty once trimmed (`text.trim() === ''`), decided by {@link NOT_BLANK_PATTERN}.
 *
 * @example isBlank(' \n') // true
 */
export function isBlank(text: string): boolean {
  return !NOT_BLANK.test(text);
}
