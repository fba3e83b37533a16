import { InvariantViolation } from '../todo/invariant';
import { describeValue } from '../todo/rejection';
import { assertCarriedAgent, type AgentState, type ChatMessage, type TurnOutcome, RECENT_TURNS_KEPT } from './agent-state';
import { assertCarriedState } from './carried-state';
import type { ChildSession, SessionState } from './session-state';

/**
 * Where a fork was taken: the source session, the run of its continue-as-new chain and the
 * history event id in that run (the ids `temporal workflow show` prints for that run).
 */
export interface ForkOrigin {
  id: string;
  runId: string;
  eventId: number;
}

/**
 * The `fork` input of a session run: where it was forked from and the subagents the source had
 * open there (listed, never restarted). The fork's first run also carries the state it starts
 * from (`state`, `agent`); its later runs carry only `from` and `children`, their state coming
 * from continue-as-new like any session's.
 */
export interface SessionFork {
  from: ForkOrigin;
  /** The source's subagents that were open at the fork point, as the source knew them then. */
  children: ChildSession[];
  /** The session's state the fork starts from (first run only). */
  state?: SessionState;
  /** The agent loop's state the fork starts from (first run only). */
  agent?: AgentState;
}

/** Longest source id a fork input may name (a session id is a workflow id; Temporal's own limit is 1,000 bytes). */
const MAX_ID_LENGTH = 1000;
/** Most open subagents a fork lists. */
export const MAX_FORKED_CHILDREN = 1000;

/**
 * The state a fork starts from, made from the source's state at the fork point (the fold of its
 * log there) and its agent's state there. A fork is a new, open session between turns:
 * - a turn that was running at the fork point is ended in the fork: `turnOpen` is false, and
 *   when the agent was running it, it ends as `interrupted` with a detail naming the fork (its
 *   messages so far stay in the conversation; tool calls whose results had not come back get a
 *   result saying so, so the conversation stays one a model accepts);
 * - messages waiting for a turn and tool calls waiting for a person are dropped;
 * - a closed source gives an open fork;
 * - the source's subagents are not copied: the fork has none; those open at the fork point are
 *   returned as `children` (the fork's `forkedChildren`);
 * - write receipts and ignored signals stay with the source (they answer its writers' retries and
 *   its own diagnostics).
 * The list, the turn count, the version, the conversation and the usage are the source's.
 *
 * @param at when the fork point's event happened (ISO 8601), for the ended turn.
 */
export function forkAt(source: { state: SessionState; agent: AgentState }, from: ForkOrigin, at: string | null): Required<SessionFork> {
  const { state, agent } = source;
  const activity = agent.activity.state;
  const where = `the session was forked from ${JSON.stringify(from.id)} at event ${from.eventId} of run ${from.runId}`;
  // The agent runs a turn once it took its message; the session's turn opens with turn/start.
  const agentInTurn = activity !== 'idle' && (activity !== 'starting' || state.turnOpen);
  let conversation = agent.conversation;
  let lastTurn = agent.lastTurn;
  let recentTurns = agent.recentTurns;
  if (agentInTurn) {
    conversation = withAnsweredCalls(conversation, `no result: ${where} before this call returned`);
    const messageId = agent.activity.state === 'starting' ? agent.activity.messageId : (agent.queue[0]?.id ?? agent.nextMessageId) - 1;
    const cut: TurnOutcome = { turn: state.turn, messageId, reason: 'interrupted', answer: null, detail: `${where}, during this turn`, endedAt: at };
    lastTurn = cut;
    recentTurns = [...(agent.recentTurns ?? (agent.lastTurn !== null ? [agent.lastTurn] : [])), cut].slice(-RECENT_TURNS_KEPT);
  }
  return {
    from,
    children: state.children.filter((child) => !child.closed),
    state: { ...state, turnOpen: false, closed: false, children: [], recentWrites: [], ignoredSignals: [] },
    agent: {
      ...agent,
      conversation,
      queue: [],
      pendingApprovals: [],
      activity: { state: 'idle' },
      lastTurn,
      ...(recentTurns !== undefined ? { recentTurns } : {}),
      revision: agent.revision + 1,
    },
  };
}

/** The conversation with a result for every call of its last message that has none yet. */
function withAnsweredCalls(conversation: ChatMessage[], content: string): ChatMessage[] {
  let last = conversation.length - 1;
  while (last >= 0 && conversation[last]!.role === 'tool') last--;
  const asked = conversation[last];
  if (asked?.role !== 'assistant' || asked.tool_calls === undefined) return conversation;
  const answered = new Set(conversation.slice(last + 1).map((m) => (m.role === 'tool' ? m.tool_call_id : '')));
  const missing = asked.tool_calls.filter((call) => !answered.has(call.id));
  if (missing.length === 0) return conversation;
  return [...conversation, ...missing.map((call): ChatMessage => ({ role: 'tool', tool_call_id: call.id, content }))];
}

/**
 * Checks a run's `fork` input (untrusted: anyone who can start a workflow can send any): the
 * origin and the listed subagents have their shapes; the first run's state passes the checks
 * every carried state passes, and is a fork's (between turns, open, no subagents, nothing
 * queued or waiting); a continued run carries no state in it (its state is carried).
 *
 * @param continued whether the run continued from an earlier run of the same session.
 * @param fail throws the refusal naming `detail` (the run's input check says which session).
 * @returns the input, typed.
 */
export function checkForkInput(value: unknown, continued: boolean, fail: (detail: string) => never): SessionFork {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(`fork must be {"from", "children", "state", "agent"}, got ${describeValue(value)}`);
  const { from, children, state, agent, ...extra } = value as Record<string, unknown>;
  if (Object.keys(extra).length > 0) fail(`fork has unknown properties ${Object.keys(extra).slice(0, 5).map((k) => describeValue(k)).join(', ')}; allowed: from, children, state, agent`);
  const origin = from as Record<string, unknown> | null;
  if (
    typeof origin !== 'object' || origin === null || Object.keys(origin).length !== 3 ||
    typeof origin.id !== 'string' || origin.id === '' || origin.id.length > MAX_ID_LENGTH ||
    typeof origin.runId !== 'string' || origin.runId === '' || origin.runId.length > MAX_ID_LENGTH ||
    typeof origin.eventId !== 'number' || !Number.isInteger(origin.eventId) || origin.eventId < 1
  ) {
    fail(`fork.from must be {"id", "runId", "eventId"} (two non-empty strings and a positive integer), got ${describeValue(from)}`);
  }
  if (!Array.isArray(children) || children.length > MAX_FORKED_CHILDREN) fail(`fork.children must be an array of at most ${MAX_FORKED_CHILDREN} subagents`);
  for (const [index, child] of (children as unknown[]).entries()) {
    const c = child as Record<string, unknown> | null;
    if (typeof c !== 'object' || c === null || typeof c.name !== 'string' || typeof c.sessionId !== 'string' || c.closed !== false || (c.task !== null && typeof c.task !== 'string')) {
      fail(`fork.children[${index}] must be an open subagent {name, sessionId, task, closed: false, counts}, got ${describeValue(child)}`);
    }
  }
  if (continued) {
    if (state !== undefined || agent !== undefined) fail('a continued run carries its state in "carried", not in fork.state or fork.agent');
    return { from: origin as unknown as ForkOrigin, children: children as ChildSession[] };
  }
  if (state === undefined || agent === undefined) fail('the first run of a fork needs fork.state and fork.agent: the state it starts from');
  try {
    assertCarriedState(state, 'the forked state');
    assertCarriedAgent(agent, 'the forked agent state');
  } catch (error) {
    if (error instanceof InvariantViolation) fail(`fork.state and fork.agent must pass the checks of a carried state: ${error.message}`);
    throw error;
  }
  const s = state as SessionState;
  const a = agent as AgentState;
  if (s.turnOpen || s.closed || s.children.length > 0) {
    fail(`a fork starts open, between turns and without subagents; got turnOpen ${s.turnOpen}, closed ${s.closed}, ${s.children.length} subagent(s)`);
  }
  if (a.queue.length > 0 || a.pendingApprovals.length > 0 || a.activity?.state !== 'idle') {
    fail(`a fork's agent starts idle with nothing queued or waiting; got activity ${describeValue(a.activity?.state)}, ${a.queue.length} queued, ${a.pendingApprovals.length} waiting`);
  }
  return { from: origin as unknown as ForkOrigin, children: children as ChildSession[], state: s, agent: a };
}
