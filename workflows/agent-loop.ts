import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
} from '@temporalio/workflow';
import type { AgentActivities, ToolOutcome, TurnSettings } from '../activities/agent-contract';
import { addUsage, boundToolResult, compactConversation, INITIAL_AGENT_STATE, messagesForModel, nudgeMessage, pinsAfterAccept, RECENT_TURNS_KEPT } from '../src/session/workflow-api';
import type { AgentActivity, AgentState, ChatMessage, QueuedMessage, SessionState, ToolCall, TurnEndReason, TurnOutcome, WithheldTool } from '../src/session/workflow-api';
import { traceIdOf, traceTurn } from './turn-trace';

// Bookkeeping: quick, retried until it works.
const bookkeeping = proxyActivities<AgentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

// A model call may take minutes, but a worker that dies in the middle of one must be noticed in
// seconds: the activity heartbeats, and a missed heartbeat retries it elsewhere. Cancelling waits
// until the call has really stopped, so an interrupted turn leaves nothing running.
const model = proxyActivities<AgentActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 10,
    nonRetryableErrorTypes: ['ModelRequestRejected'],
  },
});

// An MCP tool may run as long as its server's timeoutMs (at most an hour); the heartbeat, not
// this limit, is what notices a worker that died in the middle of a call.
const tools = proxyActivities<AgentActivities>({
  startToCloseTimeout: '65 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 8 },
});

/** What the loop needs of the session around it. */
export interface SessionView {
  readonly sessionId: string;
  state(): SessionState;
}

/** A person's decision on a tool call that waits. */
interface Decision {
  approved: boolean;
  reason: string | undefined;
}

/**
 * The agent loop of a session: a message starts a turn, the model is called (an activity, so its
 * answer is in history and a crash never repeats a completed call), each tool call runs, results
 * go back, and the turn ends when the model answers without tool calls. Workflow code only
 * connects the pieces: every rule that depends on configuration was decided in an activity
 * (the turn's settings) and every `todo_write` is judged by the session's own validator.
 */
export class AgentLoop {
  state: AgentState;
  private readonly decisions = new Map<string, Decision>();
  private scope: CancellationScope | undefined;
  private stopReason: TurnEndReason | undefined;

  constructor(
    private readonly session: SessionView,
    carried: AgentState | undefined,
  ) {
    // Never changed in place (every update makes a new object), so the frozen initial state serves.
    this.state = carried ?? INITIAL_AGENT_STATE;
  }

  /** Queues a message (with the `traceparent` of the request that sent it, when traced); the main loop runs it as the next turn. */
  enqueue(text: string, at: string, trace?: string): { messageId: number; queued: boolean; ahead: number } {
    const messageId = this.state.nextMessageId;
    const ahead = this.state.queue.length + (this.state.activity.state === 'idle' ? 0 : 1);
    const queued: QueuedMessage = { id: messageId, text, at, ...(trace !== undefined ? { trace } : {}) };
    this.update({ nextMessageId: messageId + 1, queue: [...this.state.queue, queued] });
    return { messageId, queued: ahead > 0, ahead };
  }

  /**
   * Whether the deployment routes sessions away from the build running this one (the
   * `releaseTarget` activity decides, so a replay reads the answer from history).
   */
  async confirmRelease(): Promise<boolean> {
    return (await bookkeeping.releaseTarget({ sessionId: this.session.sessionId })).move;
  }

  /** Whether a message waits for its turn. */
  hasWork(): boolean {
    return this.state.queue.length > 0;
  }

  /** Ends the running turn: its model call or wait is cancelled. */
  interrupt(reason: TurnEndReason = 'interrupted'): void {
    this.stopReason ??= reason;
    this.scope?.cancel();
  }

  /**
   * Trusts the new definitions of withheld tools (checked by `tool/accept`'s validator): they are
   * pinned as they are offered now and offered again from the next turn.
   */
  acceptTools(accepted: readonly WithheldTool[]): string[] {
    const names = new Set(accepted.map((tool) => tool.name));
    this.update({ toolPins: pinsAfterAccept(this.state.toolPins ?? {}, accepted), withheldTools: (this.state.withheldTools ?? []).filter((tool) => !names.has(tool.name)) });
    return [...names];
  }

  /** Records a person's decision on a waiting tool call. */
  decide(callId: string, approved: boolean, reason: string | undefined): void {
    this.decisions.set(callId, { approved, reason });
    this.update({ pendingApprovals: this.state.pendingApprovals.filter((p) => p.callId !== callId) });
  }

  /**
   * Runs the next queued message as a turn, to its end: inside the turn's span when the request
   * that sent the message was traced and this worker traces (`turn-trace.ts`).
   */
  runNextTurn(options: { closeAfter?: boolean } = {}): Promise<TurnOutcome> {
    const message = this.state.queue[0];
    if (message === undefined) throw new Error('runNextTurn called with no message queued');
    const traced = message.trace !== undefined ? { sessionId: this.session.sessionId, traceparent: message.trace, messageId: message.id } : undefined;
    return traceTurn(traced, () => this.runTurn(options));
  }

  private async runTurn(options: { closeAfter?: boolean }): Promise<TurnOutcome> {
    const [message, ...rest] = this.state.queue;
    if (message === undefined) throw new Error('runNextTurn called with no message queued');
    const sessionId = this.session.sessionId;
    const expectedTurn = this.session.state().turn + 1;
    // Workflow time (the time of this workflow task, in history): the turn's duration is measured
    // from it by the endTurn activity, never here, so a replay measures nothing.
    const startedAtMs = Date.now();
    this.update({ queue: rest, activity: { state: 'starting', messageId: message.id } });
    const settings = await bookkeeping.beginTurn({ sessionId, messageId: message.id, turn: expectedTurn, pins: this.state.toolPins ?? {} });
    // The definitions this turn trusts, as the activity found them (recorded, so a replay reads
    // the same); a turn begun by a build without MCP tools answers none and changes nothing.
    if (settings.pins !== undefined) this.update({ toolPins: settings.pins, withheldTools: settings.withheld ?? [] });
    // The turn/start signal the activity sent has reached the session once its turn count moves.
    await condition(() => this.session.state().turn >= expectedTurn || this.session.state().closed);
    const turn = this.session.state().turn;
    let turnStart = this.state.conversation.length;
    this.update({ conversation: [...this.state.conversation, { role: 'user', content: message.text }] });

    let outcome: Omit<TurnOutcome, 'turn' | 'messageId' | 'endedAt'> | undefined;
    this.scope = new CancellationScope();
    // An interrupt that came while the turn was starting ends it before the first call.
    if (this.stopReason !== undefined) this.scope.cancel();
    try {
      await this.scope.run(async () => {
        let steps = 0;
        let nudged = false;
        for (;;) {
          if (steps >= settings.maxSteps) {
            outcome = { reason: 'max-steps', answer: null, detail: `the turn stopped after ${steps} model calls (the limit is ${settings.maxSteps}, AGENT_SESSIONS_MAX_STEPS)` };
            return;
          }
          const compacted = compactConversation(this.state.conversation, settings.maxContextChars, turnStart);
          if (compacted.dropped > 0) {
            turnStart = compacted.turnStart;
            this.update({ conversation: compacted.conversation, compacted: true });
          }
          this.setActivity({ state: 'calling-model', turn, step: steps + 1 });
          const messages = messagesForModel(settings.systemPrompt, this.state.conversation, this.state.compacted, this.session.state().todos);
          const answer = await model.callModel({ sessionId, model: settings.model, messages, tools: settings.tools });
          steps++;
          const said: ChatMessage = { role: 'assistant', content: answer.content, ...(answer.toolCalls.length > 0 ? { tool_calls: answer.toolCalls } : {}) };
          this.update({ conversation: [...this.state.conversation, said], usage: addUsage(this.state.usage, answer.usage) });
          if (answer.toolCalls.length === 0) {
            const nudge = settings.nudge && !nudged ? nudgeMessage(this.session.state().todos) : undefined;
            if (nudge !== undefined) {
              nudged = true;
              this.update({ conversation: [...this.state.conversation, { role: 'user', content: nudge }] });
              continue;
            }
            outcome = { reason: 'completed', answer: answer.content ?? '', detail: null };
            return;
          }
          const results = await this.runToolCalls(answer.toolCalls, settings, turn, steps);
          this.update({
            conversation: [
              ...this.state.conversation,
              ...answer.toolCalls.map((call, i): ChatMessage => ({ role: 'tool', tool_call_id: call.id, content: boundToolResult(results[i]!.content) })),
            ],
          });
        }
      });
    } catch (error) {
      if (isCancellation(error) && this.stopReason !== undefined) {
        outcome = { reason: this.stopReason, answer: null, detail: this.stopReason === 'closed' ? 'the session was closed during the turn' : 'interrupted by a person' };
      } else if (error instanceof ActivityFailure) {
        const cause = error.cause;
        const detail = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
        outcome = { reason: 'model-error', answer: null, detail };
      } else {
        throw error;
      }
    } finally {
      this.scope = undefined;
      this.stopReason = undefined;
    }
    // Calls still waiting when the turn ended will never run.
    this.update({ pendingApprovals: [] });
    if (!this.session.state().closed) {
      await bookkeeping.endTurn({ sessionId, reason: outcome!.reason, startedAtMs, ...(options.closeAfter === true ? { close: true } : {}) });
      // The session/close signal the activity sent has reached the session once it is closed.
      if (options.closeAfter === true) await condition(() => this.session.state().closed);
    }
    // The outcome is shown (and an interrupt answered) once turn/end is in the log.
    const traceId = traceIdOf(message.trace);
    const ended: TurnOutcome = { turn, messageId: message.id, ...outcome!, endedAt: new Date().toISOString(), ...(traceId !== undefined ? { traceId } : {}) };
    this.update({ lastTurn: ended, recentTurns: [...(this.state.recentTurns ?? []), ended].slice(-RECENT_TURNS_KEPT), activity: { state: 'idle' } });
    return ended;
  }

  /**
   * Runs one answer's tool calls. Subagents and worker tools start at once, side by side;
   * `todo_write` calls go one after the other, in the order the model made them, so the list
   * the session ends with is the one the model wrote last.
   */
  private async runToolCalls(calls: ToolCall[], settings: TurnSettings, turn: number, step: number): Promise<ToolOutcome[]> {
    this.setActivity({ state: 'running-tools', turn, step, tools: calls.map((call) => call.function.name) });
    let writes: Promise<unknown> = Promise.resolve();
    return Promise.all(
      calls.map(async (call) => {
        const name = call.function.name;
        const place = settings.places[name];
        if (place === undefined) {
          return { ok: false, content: `there is no tool named ${JSON.stringify(name)}; the tools are ${Object.keys(settings.places).join(', ')}` };
        }
        if (settings.approveTools.includes(name)) {
          const decision = await this.waitForDecision(call, turn, step);
          if (!decision.approved) return { ok: false, content: `the call was denied by a person${decision.reason ? `: ${decision.reason}` : ''}` };
        }
        const input = { sessionId: this.session.sessionId, callId: call.id, arguments: call.function.arguments };
        if (name === 'todo_write') {
          const written = writes.then(() => tools.writeTodos(input));
          writes = written.catch(() => undefined);
          return written;
        }
        if (name === 'spawn_subagent') return this.runSubagent(input);
        return tools.runTool({ ...input, name });
      }),
    );
  }

  /** Starts a subagent and waits for its final answer, which is the tool's result. */
  private async runSubagent(input: { sessionId: string; callId: string; arguments: string }): Promise<ToolOutcome> {
    const spawned = await tools.spawnSubagent(input);
    if (!spawned.ok || spawned.childId === undefined) return spawned;
    const childId = spawned.childId;
    const child = () => this.session.state().children.find((c) => c.sessionId === childId);
    await condition(() => child()?.closed === true);
    const answer = child()?.answer;
    return answer !== undefined ? { ok: true, content: answer } : { ok: false, content: `the subagent ${childId} closed without an answer` };
  }

  private async waitForDecision(call: ToolCall, turn: number, step: number): Promise<Decision> {
    this.update({
      pendingApprovals: [...this.state.pendingApprovals, { callId: call.id, name: call.function.name, arguments: call.function.arguments, since: new Date().toISOString() }],
    });
    this.setActivity({ state: 'waiting-approval', turn, step, callIds: this.state.pendingApprovals.map((p) => p.callId) });
    await condition(() => this.decisions.has(call.id));
    const decision = this.decisions.get(call.id)!;
    this.decisions.delete(call.id);
    if (this.state.pendingApprovals.length === 0) this.setActivity({ state: 'running-tools', turn, step, tools: [call.function.name] });
    return decision;
  }

  private setActivity(activity: AgentActivity): void {
    this.update({ activity });
  }

  private update(change: Partial<AgentState>): void {
    this.state = { ...this.state, ...change, revision: this.state.revision + 1 };
  }
}
