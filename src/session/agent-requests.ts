import { isBlank } from '../todo/blank-text';
import { describeValue, Rejection, type RejectionRule } from '../todo/rejection';
import { MAX_QUEUED_MESSAGES, MAX_USER_MESSAGE_CHARS } from './agent-context';
import type { AgentState } from './agent-state';

/** What `user/message` takes. */
export interface UserMessageInput {
  text: string;
}

/** What `tool/approve` and `tool/deny` take: the model's own id of the call. */
export interface ToolDecisionInput {
  callId: string;
  reason?: string;
}

function refuse(subject: string, rule: RejectionRule, path: string, detail: string): never {
  throw new Rejection([{ rule, path, detail }], subject);
}

function onlyKeys(subject: string, input: unknown, allowed: readonly string[], shape: string): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    refuse(subject, 'shape', 'arguments', `the arguments must be an object ${shape}, got ${describeValue(input)}`);
  }
  const extra = Object.keys(input as object).filter((key) => !allowed.includes(key));
  if (extra.length > 0) {
    refuse(subject, 'shape', 'arguments', `unknown propert${extra.length === 1 ? 'y' : 'ies'} ${extra.slice(0, 5).map((k) => describeValue(k)).join(', ')}; only ${allowed.map((k) => `"${k}"`).join(' and ')} allowed`);
  }
  return input as Record<string, unknown>;
}

/**
 * Checks a `user/message`: a non-empty text of at most {@link MAX_USER_MESSAGE_CHARS}
 * characters, to a session that is open and has room in its queue ({@link MAX_QUEUED_MESSAGES}
 * waiting). The validator's rules: they never run on replay.
 *
 * @throws Rejection (`session-closed`, `empty-message`, `message-too-long`, `queue-full`, `shape`).
 */
export function acceptUserMessage(input: unknown, closed: boolean, queued = 0): UserMessageInput {
  const subject = 'user/message';
  if (closed) refuse(subject, 'session-closed', 'session', 'the session is closed and takes no more messages');
  const { text } = onlyKeys(subject, input, ['text'], '{"text": "..."}');
  if (typeof text !== 'string') refuse(subject, 'shape', 'text', `text must be a string, got ${describeValue(text)}`);
  if (isBlank(text as string)) refuse(subject, 'empty-message', 'text', 'the message is empty; say what the agent should do');
  if ((text as string).length > MAX_USER_MESSAGE_CHARS) {
    refuse(subject, 'message-too-long', 'text', `the message is ${(text as string).length} characters, more than the limit of ${MAX_USER_MESSAGE_CHARS}`);
  }
  if (queued >= MAX_QUEUED_MESSAGES) {
    refuse(subject, 'queue-full', 'session', `${queued} messages already wait for their turn (the limit is ${MAX_QUEUED_MESSAGES}); send this one after a turn ends, or interrupt the running turn`);
  }
  return { text: text as string };
}

/**
 * Checks a `tool/approve` or `tool/deny`: the call id must name a tool call that waits for a
 * person.
 *
 * @throws Rejection (`no-pending-call`, `shape`).
 */
export function acceptToolDecision(subject: 'tool/approve' | 'tool/deny', input: unknown, agent: AgentState): ToolDecisionInput {
  const { callId, reason } = onlyKeys(subject, input, ['callId', 'reason'], '{"callId": "...", "reason": "..."}');
  if (typeof callId !== 'string' || callId === '') refuse(subject, 'shape', 'callId', `callId must be the tool call's id, got ${describeValue(callId)}`);
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > 2000)) {
    refuse(subject, 'shape', 'reason', `reason must be a string of at most 2000 characters, got ${describeValue(reason)}`);
  }
  if (!agent.pendingApprovals.some((pending) => pending.callId === callId)) {
    const waiting = agent.pendingApprovals.map((p) => p.callId);
    refuse(subject, 'no-pending-call', 'callId', `no tool call ${describeValue(callId)} waits for approval${waiting.length > 0 ? `; waiting: ${waiting.slice(0, 10).join(', ')}` : ''}`);
  }
  return reason === undefined ? { callId: callId as string } : { callId: callId as string, reason: reason as string };
}

/**
 * Checks a `turn/interrupt`: a turn must be running.
 *
 * @throws Rejection (`no-running-turn`).
 */
export function acceptInterrupt(agent: AgentState): void {
  if (agent.activity.state === 'idle') refuse('turn/interrupt', 'no-running-turn', 'session', 'no turn is running; there is nothing to interrupt');
}
