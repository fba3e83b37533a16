import { describeValue, Rejection } from '../todo/rejection';

/**
 * A tool the session does not offer its model because its definition changed after the session
 * first offered it (a server that rewrites a trusted tool's description or schema: a "rug pull").
 * It stays withheld until an operator accepts the new definition (`tool/accept`).
 */
export interface WithheldTool {
  /** The tool's name as the model sees it (`mcp__<server>__<tool>`). */
  name: string;
  /** Why, in a sentence a person reads. */
  reason: string;
  /** The hash of the definition the session first offered (and still trusts). */
  pinned: string;
  /** The hash of the definition the server offers now: what accepting trusts. */
  offered: string;
}

/** Hashes of tool definitions by tool name: what a session trusts. */
export type ToolPins = Readonly<Record<string, string>>;

/** What `tool/accept` takes: the withheld tools to trust again; none named means every one. */
export interface ToolAcceptInput {
  names?: string[];
}

/** What `tool/accept` answers. */
export interface ToolAcceptResult {
  /** The tools whose new definitions the session now trusts: offered again from the next turn. */
  accepted: string[];
}

/**
 * Checks a `tool/accept`: an object with at most a list of names, each one a tool the session
 * withholds now; with no names, at least one tool must be withheld.
 *
 * @returns the tools to accept.
 * @throws Rejection (`shape`, `no-withheld-tool`) naming the value.
 */
export function acceptToolAccept(input: unknown, withheld: readonly WithheldTool[]): WithheldTool[] {
  const subject = 'tool/accept';
  const fail = (rule: 'shape' | 'no-withheld-tool', path: string, detail: string): never => {
    throw new Rejection([{ rule, path, detail }], subject);
  };
  if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input))) {
    fail('shape', 'arguments', `the arguments must be an object {"names": ["..."]}, got ${describeValue(input)}`);
  }
  const { names, ...extra } = (input ?? {}) as Record<string, unknown>;
  if (Object.keys(extra).length > 0) fail('shape', 'arguments', `unknown property ${describeValue(Object.keys(extra)[0])}; only "names" is allowed`);
  const listed = withheld.map((tool) => tool.name);
  const which = listed.length > 0 ? `; withheld: ${listed.slice(0, 20).join(', ')}` : '; no tool is withheld';
  if (names === undefined) {
    if (withheld.length === 0) fail('no-withheld-tool', 'names', 'no tool is withheld in this session; there is nothing to accept');
    return [...withheld];
  }
  if (!Array.isArray(names) || names.length === 0 || names.some((name) => typeof name !== 'string')) {
    fail('shape', 'names', `names must be a non-empty list of tool names, got ${describeValue(names)}`);
  }
  return (names as string[]).map((name, index) => withheld.find((tool) => tool.name === name) ?? fail('no-withheld-tool', `names[${index}]`, `${describeValue(name)} is not withheld${which}`));
}

/**
 * The withheld tools a `tool/accept` names (all of them when it names none), checking nothing:
 * what the handler applies once the validator has judged the update, and again on replay, where
 * a rule of a later build must not refuse what was accepted then.
 */
export function withheldNamed(input: ToolAcceptInput | undefined, withheld: readonly WithheldTool[]): WithheldTool[] {
  const names = input?.names;
  return Array.isArray(names) ? withheld.filter((tool) => names.includes(tool.name)) : [...withheld];
}

/** The pins after accepting `accepted`: each now trusts the definition the server offers. */
export function pinsAfterAccept(pins: ToolPins, accepted: readonly WithheldTool[]): Record<string, string> {
  return { ...pins, ...Object.fromEntries(accepted.map((tool) => [tool.name, tool.offered])) };
}
