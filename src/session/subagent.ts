import { describeValue, Rejection } from '../todo/rejection';
import type { SessionState } from './session-state';

/** What `subagent/spawn` takes: the subagent's name, unique within its parent, and its task. */
export interface SubagentSpawnInput {
  name: string;
  task?: string;
  /** Run the subagent's own agent loop with `task` as its first message (what `spawn_subagent` asks). */
  agent?: boolean;
}

/**
 * What a subagent's name must be, as a JSON Schema `pattern` (ECMAScript and Python read it alike):
 * 1-64 letters, digits, ".", "_" or "-", beginning with a letter or digit. The spawn validator
 * tests with it, and the HTTP API's document states it.
 */
export const SUBAGENT_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
const NAME = new RegExp(SUBAGENT_NAME_PATTERN);
/** Longest task text a spawn accepts. */
export const MAX_TASK_LENGTH = 4000;

/**
 * The session id of a parent's subagent: `<parent>/<name>`, readable as a path in the tree.
 *
 * @example childSessionId('build-42', 'tests') // 'build-42/tests'
 */
export function childSessionId(parentId: string, name: string): string {
  return `${parentId}/${name}`;
}

/**
 * Checks a `subagent/spawn` request against the parent's state: the validator's rules, which
 * never run on replay (so they may change from one release to the next). The handler applies
 * what was accepted without judging it again.
 *
 * @param starting names of subagents whose child is being started right now (not yet recorded).
 * @throws Rejection: `subagent-name` for a missing or malformed name or task,
 *   `subagent-exists` when the name is taken, `session-closed` when the parent is closed.
 */
export function acceptSubagentSpawn(
  input: unknown,
  state: SessionState,
  starting: ReadonlySet<string> = new Set(),
): SubagentSpawnInput {
  const reject = (rule: 'subagent-name' | 'subagent-exists' | 'session-closed', path: string, detail: string): never => {
    throw new Rejection([{ rule, path, detail }], 'subagent/spawn');
  };
  if (state.closed) reject('session-closed', 'session', 'the session is closed and starts no more subagents');
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return reject('subagent-name', 'arguments', `the arguments must be an object {"name": "...", "task": "..."}, got ${describeValue(input)}`);
  }
  const { name, task, agent, ...extra } = input as Record<string, unknown>;
  const unknown = Object.keys(extra);
  if (unknown.length > 0) reject('subagent-name', 'arguments', `unknown propert${unknown.length === 1 ? 'y' : 'ies'} ${unknown.map((k) => JSON.stringify(k)).join(', ')}; only "name", "task" and "agent" are allowed`);
  if (typeof name !== 'string' || !NAME.test(name)) {
    reject('subagent-name', 'name', `name must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit, got ${describeValue(name)}`);
  }
  if (task !== undefined && (typeof task !== 'string' || task.length > MAX_TASK_LENGTH)) {
    reject('subagent-name', 'task', `task must be a string of at most ${MAX_TASK_LENGTH} characters, got ${describeValue(task)}`);
  }
  if (agent !== undefined && typeof agent !== 'boolean') reject('subagent-name', 'agent', `agent must be true or false, got ${describeValue(agent)}`);
  if (agent === true && (typeof task !== 'string' || task.trim() === '')) {
    reject('subagent-name', 'task', 'a subagent that runs its own agent loop needs a task: its first message');
  }
  const valid = name as string;
  if (state.children.some((child) => child.name === valid) || starting.has(valid)) {
    reject('subagent-exists', 'name', `this session already has a subagent named ${JSON.stringify(valid)}; pick another name`);
  }
  return { name: valid, ...(task !== undefined ? { task: task as string } : {}), ...(agent === true ? { agent: true } : {}) };
}

/**
 * The refusal of a spawn whose child session id is already held by another workflow (a session
 * started directly with that id, or an earlier one: ids are never reused). The parent records
 * nothing: a subagent is recorded only once its child has really started.
 */
export function subagentIdTaken(childId: string): Rejection {
  return new Rejection(
    [
      {
        rule: 'subagent-id-taken',
        path: 'name',
        detail: `the session id ${JSON.stringify(childId)} is already taken by another session (ids are never reused); pick another name`,
      },
    ],
    'subagent/spawn',
  );
}
