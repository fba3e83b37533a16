import { countTodos } from '../todo/counts';
import { type TodoCounts } from '../todo/todo-item';
import { INITIAL_AGENT_STATE, type AgentActivity, type AgentState, type PendingApproval, type TurnOutcome, type Usage } from './agent-state';
import type { ForkOrigin } from './fork';
import type { WithheldTool } from './tool-pins';
import type { ChildSession, SessionState } from './session-state';

/** What the agent loop is doing, as the `session` query shows it. */
export interface AgentStatus {
  activity: AgentActivity;
  /** Messages waiting for a turn. */
  queued: number;
  /** Tool calls waiting for a person (`tool/approve`, `tool/deny`). */
  pendingApprovals: PendingApproval[];
  lastTurn: TurnOutcome | null;
  /** The turns that ended last, oldest first (at most 12; `lastTurn` is the newest). */
  recentTurns: TurnOutcome[];
  /** Tools the last turn did not offer because their definitions changed since first offered, until accepted (`tool/accept`). */
  withheldTools: WithheldTool[];
  /** Grows with every change of the agent's state (conversation, activity, queue). */
  revision: number;
}

/** Where a session sits in a tree of agents. */
export interface SessionParent {
  sessionId: string;
  /** The name the parent gave this subagent. */
  name: string;
}

/** A session's state as the `session` query answers it. */
export interface SessionSnapshot extends Omit<SessionState, 'recentWrites'> {
  /** The session id, which is also the workflow id. */
  sessionId: string;
  counts: TodoCounts;
  /** The parent session, for a subagent; `null` for a top-level session. */
  parent: SessionParent | null;
  /** What this session was asked to do, if its starter said. */
  task: string | null;
  /** What the model calls of this session's agent loop cost (zeros for a session driven from outside). */
  usage: Usage;
  /** For a fork: the session, run and history event it was forked from; `null` otherwise. */
  forkedFrom: ForkOrigin | null;
  /** For a fork: the subagents its source had open at the fork point, as the source knew them then (not copied, not restarted). */
  forkedChildren: ChildSession[];
  /** The agent loop's state. */
  agent: AgentStatus;
}

/** What a session is told about itself at its start: its parent, its task, where it was forked from. */
export interface SessionAbout {
  parent?: SessionParent | null;
  task?: string | null;
  fork?: { from: ForkOrigin; children: ChildSession[] } | undefined;
}

/** Adds the id, the parent, the counts and the agent's status to a state, leaving out the write receipts and the conversation. */
export function snapshotSession(sessionId: string, state: SessionState, about: SessionAbout = {}, agent: AgentState = INITIAL_AGENT_STATE): SessionSnapshot {
  const { recentWrites: _receipts, ...rest } = state;
  return {
    sessionId,
    ...rest,
    counts: countTodos(state.todos),
    parent: about.parent ?? null,
    task: about.task ?? null,
    usage: agent.usage,
    forkedFrom: about.fork?.from ?? null,
    forkedChildren: about.fork?.children ?? [],
    agent: {
      activity: agent.activity,
      queued: agent.queue.length,
      pendingApprovals: agent.pendingApprovals,
      lastTurn: agent.lastTurn,
      recentTurns: agent.recentTurns ?? (agent.lastTurn !== null ? [agent.lastTurn] : []),
      withheldTools: agent.withheldTools ?? [],
      revision: agent.revision,
    },
  };
}
