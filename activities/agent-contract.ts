/**
 * What the session workflow asks of the outside world while it runs the agent: the activities'
 * names, inputs and results. Workflow code imports this file as types only; the worker
 * registers the implementations (activities/agent-activities.ts).
 *
 * Every decision that depends on the worker's configuration (which model, how many steps, which
 * tools need a person's approval, the tool definitions and the policy clause in them) is made in
 * an activity and so recorded in history: replay reads the recorded answer and can never decide
 * differently from the day the turn ran, whatever the workers run with today.
 */
import type { ChatMessage, ToolCall, Usage } from '../src/session/agent-state';
import type { WithheldTool } from '../src/session/tool-pins';

/** An OpenAI-compatible function tool definition, as offered to the model. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Where a tool runs: `session` tools are carried out by the session itself; `worker` tools by the {@link AgentActivities.runTool} activity. */
export type ToolPlace = 'session' | 'worker';

/** The settings a turn runs with, read from the worker's configuration when the turn starts. */
export interface TurnSettings {
  systemPrompt: string;
  /** The model name sent with every call. */
  model: string;
  /** Most model calls in one turn. */
  maxSteps: number;
  /** Past this many characters the conversation is compacted. */
  maxContextChars: number;
  /** Whether a turn that ends with open todos gets one reminder. */
  nudge: boolean;
  /** Tools whose calls wait for a person's approval. */
  approveTools: string[];
  tools: ToolDefinition[];
  /** Where each offered tool runs, by name. */
  places: Record<string, ToolPlace>;
  /**
   * The hash of each offered MCP tool's definition, with those pinned before: what the session
   * trusts from now on. Absent from the answers of builds before MCP tools.
   */
  pins?: Record<string, string>;
  /** The MCP tools not offered because their definitions differ from the pinned ones. */
  withheld?: WithheldTool[];
}

/** What the model answered. */
export interface ModelAnswer {
  content: string | null;
  toolCalls: ToolCall[];
  /** The usage the endpoint reported for this call, with the characters counted here. */
  usage: Usage;
  finishReason: string | null;
  /** The model the endpoint says answered (its `model` field), when it said; read by traces, not by the loop. */
  model?: string;
}

/** The outcome of one tool call, as the model reads it. */
export interface ToolOutcome {
  /** The text given back to the model as the tool result. */
  content: string;
  /** False when the call was refused or failed (the content says why). */
  ok: boolean;
}

/** The agent's activities. */
export interface AgentActivities {
  /**
   * Marks the start of a turn in the session's log (the `turn/start` signal, so the offline
   * fold sees agent turns exactly as others) and answers the settings the turn runs with.
   * `turn` is the turn number the signal starts: a retry finds the session there already and
   * sends nothing. `pins` are the definitions the session trusts (see {@link TurnSettings.pins}):
   * an MCP tool whose definition differs from its pin is withheld.
   */
  beginTurn(input: { sessionId: string; messageId: number; turn: number; pins?: Record<string, string> }): Promise<TurnSettings>;
  /**
   * Marks the end of the turn in the session's log (the `turn/end` signal), and with `close`
   * closes the session the same way (the `session/close` signal): what a subagent does once it
   * has run its task. Counts the turn (`agent_sessions_turns_total`) and, given `startedAtMs` (the
   * workflow time its message left the queue; absent from turns begun by older builds), its
   * duration up to the time this activity was scheduled.
   */
  endTurn(input: { sessionId: string; reason: string; startedAtMs?: number; close?: boolean }): Promise<void>;
  /**
   * Whether the session should move to another build now: it runs on a build of its deployment
   * that is neither the current nor the ramping one (a session that moved onto a build never
   * moves away while that build is routed to). Asked at the turn boundary after a `session/wake`,
   * from the session's own versioning info and the deployment's routing.
   */
  releaseTarget(input: { sessionId: string }): Promise<{ move: boolean; runningBuild: string | null; current: string | null; ramping: string | null }>;
  /**
   * Calls the model once, streamed: its words go to the session's companion stream as they come
   * (never to the session's history), and the result is the assembled answer, the same as
   * without streaming. Heartbeats while the call is in flight, so a call on a worker that died is
   * retried within seconds (its next attempt tells readers `reset`) and an interrupt cancels it.
   * 429, 5xx and timeouts are retried with backoff; any other 4xx fails with the server's message
   * (type `ModelRequestRejected`).
   */
  callModel(input: { sessionId: string; model: string; messages: ChatMessage[]; tools: ToolDefinition[] }): Promise<ModelAnswer>;
  /**
   * Sends the model's `todo_write` to the session as the `todo_write` Update — judged by the
   * same validator as any other writer — with an update id derived from the call, so a retried
   * activity is applied once. A refusal is not a failure: its message is the outcome.
   */
  writeTodos(input: { sessionId: string; callId: string; arguments: string }): Promise<ToolOutcome>;
  /**
   * Starts a subagent through the session's `subagent/spawn` Update (its validator judges the
   * name), asking it to run its own agent loop with the task as its first message.
   */
  spawnSubagent(input: { sessionId: string; callId: string; arguments: string }): Promise<ToolOutcome & { childId?: string }>;
  /** Runs a worker tool (`read_file`, `list_files`, …) from the worker's registry. */
  runTool(input: { sessionId: string; callId: string; name: string; arguments: string }): Promise<ToolOutcome>;
}
