import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatMessage, SessionSnapshot, TurnOutcome } from '../session';
import { renderTodoList } from '../todo/render-list';
import type { TodoItem } from '../todo/todo-item';
import type { Transcript, UserMessageResult } from '../../workflows/messages';
import { LINE_CHARS, renderApproval, renderToolCall, renderToolResult, shorten, toolNamesById } from './render-agent';

/** What a {@link TurnFollower} needs of a session client. */
export interface FollowedSession {
  session(sessionId: string): Promise<SessionSnapshot>;
  transcript(sessionId: string): Promise<Transcript>;
}

/**
 * Watches one message's turn from the outside, snapshot by snapshot: says (as lines for a
 * person) every tool call and result of that turn as it appears, every change of the todo
 * list, and every call that waits for approval; knows when the turn has ended. Pure: it reads
 * what it is given and asks nothing, so it can be driven by any poll loop (see {@link followTurn}).
 *
 * A message queued behind a running turn waits: until its own turn starts, what the turn ahead
 * does is not this message's story, so it is passed over silently (only approvals it waits on
 * are told, since a person must act before this message can run).
 */
export class TurnFollower {
  private readonly told = new Set<string>();
  private readonly approvalsTold = new Set<string>();
  private listShown: string | undefined;
  private started = false;
  private waitingTold = false;
  private skipped = false;

  constructor(
    private readonly sessionId: string,
    private readonly sent: UserMessageResult,
    /** The text sent, to find where its turn starts in the conversation. */
    private readonly text: string,
    /** Whether the model's words are shown as they stream: then its text before tool calls is not told again. */
    private readonly streamed = false,
  ) {}

  /**
   * Whether the last observation set its transcript aside (read after a change the snapshot had
   * not seen yet, it could not be told apart from this turn's own messages): fetch it again.
   */
  get transcriptSkipped(): boolean {
    return this.skipped;
  }

  /** Whether this message's turn has started (or already ended) in `snapshot`. */
  turnStarted(snapshot: SessionSnapshot): boolean {
    const { activity, lastTurn } = snapshot.agent;
    const ours = this.sent.messageId;
    if (lastTurn !== null && lastTurn.messageId >= ours) return true;
    if (activity.state === 'idle') return false;
    if (activity.state === 'starting') return activity.messageId >= ours;
    // Turns run in the order messages came, one at a time: the running one follows the last that ended.
    return (lastTurn?.messageId ?? 0) + 1 >= ours;
  }

  /**
   * How this message's turn ended, once it has: found among the turns that ended last, so a
   * turn that ended (and the next one too) between two looks is not missed.
   */
  outcome(snapshot: SessionSnapshot): TurnOutcome | undefined {
    const ours = this.sent.messageId;
    const last = snapshot.agent.lastTurn;
    return snapshot.agent.recentTurns.find((turn) => turn.messageId === ours) ?? (last !== null && last.messageId === ours ? last : undefined);
  }

  /**
   * Whether this message will never get a turn: the session is closed, nothing runs, and the
   * last turn that ran was an earlier message's.
   */
  neverRuns(snapshot: SessionSnapshot): boolean {
    return snapshot.closed && snapshot.agent.activity.state === 'idle' && (snapshot.agent.lastTurn?.messageId ?? 0) < this.sent.messageId;
  }

  /** The lines that say what changed since the last observation (`transcript` when it was fetched again). */
  observe(snapshot: SessionSnapshot, transcript?: Transcript): string[] {
    const lines: string[] = [];
    const activity = snapshot.agent.activity;
    const startedNow = !this.started && this.turnStarted(snapshot);
    if (startedNow) this.started = true;
    if (!this.waitingTold) {
      this.waitingTold = true;
      if (this.sent.queued) {
        lines.push(`message ${this.sent.messageId} is queued behind ${this.sent.ahead} other${this.sent.ahead === 1 ? '' : 's'}; following it until its own turn ends`);
      }
    }
    this.skipped = false;
    if (transcript !== undefined) {
      // Until this turn has put its message into the conversation (it does so as it leaves
      // `starting`), everything there belongs to earlier turns. The transcript is read just after
      // the snapshot: one that counts more model calls is already past the moment the snapshot saw.
      const newer = transcript.usage.model_calls !== snapshot.usage.model_calls;
      const beforeOwnMessage = !this.started || (activity.state === 'starting' && activity.messageId === this.sent.messageId);
      if (beforeOwnMessage && newer) this.skipped = true;
      else if (beforeOwnMessage) for (const key of this.keys(transcript.messages)) this.told.add(key);
      else lines.push(...this.newInTranscript(transcript.messages));
    }
    // The list when it changed, not on every version (a turn's end moves the version alone).
    // While the agent's own todo_write runs, its result (and the list, from the call) comes next.
    const list = JSON.stringify(snapshot.todos);
    const writing = activity.state === 'running-tools' && activity.tools.includes('todo_write');
    if (this.started && !writing && list !== this.listShown) {
      this.listShown = list;
      if (snapshot.todos !== null) lines.push('todo list:', renderTodoList(snapshot.todos, '  '));
    }
    for (const pending of snapshot.agent.pendingApprovals) {
      if (this.approvalsTold.has(pending.callId)) continue;
      this.approvalsTold.add(pending.callId);
      lines.push(renderApproval(this.sessionId, pending));
    }
    return lines;
  }

  /** This turn's messages: those after the last user message that is the one sent. */
  private ownMessages(messages: readonly ChatMessage[]): readonly ChatMessage[] {
    const wanted = this.text.trim();
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = messages[i]!;
      if (message.role === 'user' && message.content.trim() === wanted) return messages.slice(i + 1);
    }
    // Compaction keeps the running turn's first message, so only a turn long over can lack it.
    return [];
  }

  private newInTranscript(messages: readonly ChatMessage[]): string[] {
    const names = toolNamesById(messages);
    const calls = new Map(messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((call) => [call.id, call.function.arguments] as const) : [])));
    const lines: string[] = [];
    for (const message of this.ownMessages(messages)) {
      if (message.role === 'assistant') {
        if ((message.tool_calls ?? []).length === 0) continue; // the final answer: printed on stdout at the end
        if (!this.streamed && message.content !== null && message.content.trim() !== '' && this.tell(`said:${message.tool_calls![0]!.id}`)) {
          lines.push(`assistant: ${shorten(message.content.replace(/\s+/g, ' ').trim(), LINE_CHARS)}`);
        }
        for (const call of message.tool_calls ?? []) if (this.tell(`call:${call.id}`)) lines.push(renderToolCall(call));
      } else if (message.role === 'tool') {
        if (!this.tell(`result:${message.tool_call_id}`)) continue;
        const name = names.get(message.tool_call_id);
        lines.push(renderToolResult(name, message.content));
        // An accepted write replaced the list with exactly what it sent: shown from the call, so
        // that no list is missed however quickly the next one follows it.
        const written = name === 'todo_write' && message.content.startsWith('Updated todo list') ? writtenList(calls.get(message.tool_call_id)) : undefined;
        if (written !== undefined) {
          this.listShown = JSON.stringify(written);
          lines.push('todo list:', renderTodoList(written, '  '));
        }
      } else if (message.role === 'user') {
        // A message the loop added itself within the turn: the reminder about open todos.
        if (this.tell(`user:${message.content}`)) lines.push(`reminder to the model: ${shorten(message.content.replace(/\s+/g, ' ').trim(), LINE_CHARS)}`);
      }
    }
    return lines;
  }

  private keys(messages: readonly ChatMessage[]): string[] {
    return messages.flatMap((message) => {
      if (message.role === 'assistant') return (message.tool_calls ?? []).flatMap((call) => [`call:${call.id}`, `said:${call.id}`]);
      if (message.role === 'tool') return [`result:${message.tool_call_id}`];
      return [];
    });
  }

  /** True the first time `key` is seen. */
  private tell(key: string): boolean {
    if (this.told.has(key)) return false;
    this.told.add(key);
    return true;
  }
}

/**
 * The list an accepted `todo_write` call stored: its items with their content trimmed, as the
 * session keeps them; `undefined` when the arguments are not that shape (then the session's own
 * list is shown when it changes).
 */
function writtenList(args: string | undefined): TodoItem[] | undefined {
  if (args === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return undefined;
  }
  const todos = (parsed as { todos?: unknown } | null)?.todos;
  if (!Array.isArray(todos)) return undefined;
  const items = todos.map((item: unknown) => item as Partial<TodoItem> | null);
  if (!items.every((item) => typeof item?.content === 'string' && typeof item.status === 'string')) return undefined;
  return items.map((item) => ({ content: item!.content!.trim(), status: item!.status! }));
}

/** How following a turn ended. */
export type FollowResult = { ended: true; outcome: TurnOutcome } | { ended: false; why: 'stopped' | 'never-runs' };

/**
 * Follows the turn of message `sent` until it ends: polls the `session` query, fetches the
 * transcript again whenever `agent.revision` moved, and hands every line a {@link TurnFollower}
 * produces to `say` (`onStarted` is called once, when the turn is first seen started). Ends when the turn has ended, when the session closed before the message
 * got a turn, or when `signal` aborts (following stops; the turn itself goes on).
 */
export async function followTurn(
  client: FollowedSession,
  sessionId: string,
  sent: UserMessageResult,
  text: string,
  say: (line: string) => void,
  options: { signal?: AbortSignal; pollMs?: number; streamed?: boolean; onStarted?: () => void } = {},
): Promise<FollowResult> {
  const follower = new TurnFollower(sessionId, sent, text, options.streamed === true);
  let started = false;
  const pollMs = options.pollMs ?? 250;
  let revision: number | undefined;
  for (;;) {
    if (options.signal?.aborted) return { ended: false, why: 'stopped' };
    const snapshot = await client.session(sessionId);
    if (!started && follower.turnStarted(snapshot)) {
      started = true;
      options.onStarted?.();
    }
    const outcome = follower.outcome(snapshot);
    // Fetched after the snapshot, the transcript holds at least what the snapshot saw.
    const transcript = snapshot.agent.revision !== revision || outcome !== undefined ? await client.transcript(sessionId) : undefined;
    for (const line of follower.observe(snapshot, transcript)) say(line);
    revision = follower.transcriptSkipped ? undefined : snapshot.agent.revision;
    if (outcome !== undefined) return { ended: true, outcome };
    if (follower.neverRuns(snapshot)) return { ended: false, why: 'never-runs' };
    await sleep(pollMs, undefined, options.signal !== undefined ? { signal: options.signal } : {}).catch(() => undefined);
  }
}
