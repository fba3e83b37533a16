import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { temporal } from '@temporalio/proto';
import { InvalidInputError, RequestRejectedError, resolveForkPoint } from '../../src/client';
import { eventsThroughTaskOf, foldHistory, parseExportedHistory, runsOf, stateAtEvent, type SessionRun } from '../../src/history';
import {
  checkSessionInput,
  foldSession,
  forkAt,
  INITIAL_AGENT_STATE,
  INITIAL_SESSION_STATE,
  runStartAgent,
  runStartState,
  SessionInputRejection,
  type AgentState,
  type ChatMessage,
  type ForkOrigin,
  type RunFacts,
  type SessionEvent,
  type SessionState,
} from '../../src/session';
import { thrown } from './domain-fixtures';

const fresh: RunFacts = { workflowId: 'build-42-retry', parentWorkflowId: undefined, continuedFromRunId: undefined };
const continued: RunFacts = { ...fresh, continuedFromRunId: 'run-1' };
const from: ForkOrigin = { id: 'build-42', runId: 'run-a', eventId: 17 };
const AT = '2026-01-02T03:04:05.000Z';

const todo = (content: string, status: 'pending' | 'in_progress' | 'completed' = 'pending') => ({ content, status });
const call = (id: string, name = 'todo_write') => ({ id, type: 'function' as const, function: { name, arguments: '{}' } });

/** A session in its second turn, with a subagent open and one closed, receipts and an ignored signal. */
const midTurn: SessionState = {
  ...foldSession([
    { type: 'turn/start' },
    { type: 'turn/end' },
    { type: 'turn/start' },
    { type: 'todo/write', todos: [todo('Tag'), todo('Publish', 'in_progress')], updateId: 'u-1' },
    { type: 'subagent/spawn', name: 'done', sessionId: 'build-42/done', task: 'Finish' },
    { type: 'subagent/spawn', name: 'open', sessionId: 'build-42/open', task: 'Keep going' },
    { type: 'subagent/closed', sessionId: 'build-42/done', counts: { pending: 0, in_progress: 0, completed: 1 }, answer: 'ok' },
    { type: 'signal/ignored', name: 'todo_write', reason: 'send it as an update' },
  ]),
};
const conversation: ChatMessage[] = [
  { role: 'user', content: 'Plan' },
  { role: 'assistant', content: 'Planned.' },
  { role: 'user', content: 'Tag it' },
  { role: 'assistant', content: null, tool_calls: [call('c1'), call('c2', 'spawn_subagent')] },
  { role: 'tool', tool_call_id: 'c1', content: 'Updated todo list: 1 pending, 1 in progress, 0 completed' },
];
const runningAgent: AgentState = {
  ...INITIAL_AGENT_STATE,
  conversation,
  queue: [{ id: 3, text: 'Then publish', at: null }],
  nextMessageId: 4,
  pendingApprovals: [{ callId: 'c9', name: 'read_file', arguments: '{}', since: null }],
  activity: { state: 'running-tools', turn: 2, step: 1, tools: ['spawn_subagent'] },
  lastTurn: { turn: 1, messageId: 1, reason: 'completed', answer: 'Planned.', detail: null, endedAt: null },
  recentTurns: [{ turn: 1, messageId: 1, reason: 'completed', answer: 'Planned.', detail: null, endedAt: null }],
  revision: 12,
};

describe('forkAt', () => {
  test('a fork inside a turn ends it as interrupted, answers its cut calls, drops the queue and the waiting calls, and lists the open subagents', () => {
    const fork = forkAt({ state: midTurn, agent: runningAgent }, from, AT);
    assert.deepEqual(fork.from, from);
    assert.deepEqual(fork.children, [{ name: 'open', sessionId: 'build-42/open', task: 'Keep going', closed: false, counts: null }]);
    assert.deepEqual(
      [fork.state.turn, fork.state.turnOpen, fork.state.closed, fork.state.children, fork.state.recentWrites, fork.state.ignoredSignals],
      [2, false, false, [], [], []],
    );
    assert.deepEqual([fork.state.todos, fork.state.version], [midTurn.todos, midTurn.version]);
    assert.deepEqual(fork.agent.conversation.slice(0, conversation.length), conversation);
    assert.deepEqual(fork.agent.conversation.slice(conversation.length), [
      { role: 'tool', tool_call_id: 'c2', content: 'no result: the session was forked from "build-42" at event 17 of run run-a before this call returned' },
    ]);
    assert.deepEqual([fork.agent.queue, fork.agent.pendingApprovals, fork.agent.activity, fork.agent.nextMessageId], [[], [], { state: 'idle' }, 4]);
    const cut = { turn: 2, messageId: 2, reason: 'interrupted', answer: null, detail: 'the session was forked from "build-42" at event 17 of run run-a, during this turn', endedAt: AT };
    assert.deepEqual(fork.agent.lastTurn, cut);
    assert.deepEqual(fork.agent.recentTurns, [runningAgent.lastTurn, cut]);
    assert.equal(fork.agent.revision, 13);
  });

  test('a fork between turns keeps the transcript and the last turn as they are; a closed source gives an open fork', () => {
    const ended: SessionState = { ...foldSession([{ type: 'turn/start' }, { type: 'turn/end' }, { type: 'session/close' }]) };
    const idle: AgentState = { ...INITIAL_AGENT_STATE, conversation: conversation.slice(0, 2), lastTurn: runningAgent.lastTurn, revision: 5 };
    const fork = forkAt({ state: ended, agent: idle }, from, AT);
    assert.deepEqual([fork.state.closed, fork.state.turnOpen, fork.state.turn], [false, false, 1]);
    assert.deepEqual([fork.agent.conversation, fork.agent.lastTurn], [idle.conversation, idle.lastTurn]);
  });

  test('a message the agent had taken but whose turn had not begun is dropped, without an outcome', () => {
    const between: SessionState = { ...foldSession([{ type: 'turn/start' }, { type: 'turn/end' }]) };
    const starting: AgentState = { ...INITIAL_AGENT_STATE, nextMessageId: 3, activity: { state: 'starting', messageId: 2 }, lastTurn: runningAgent.lastTurn };
    const fork = forkAt({ state: between, agent: starting }, from, AT);
    assert.deepEqual([fork.agent.activity, fork.agent.lastTurn, fork.agent.conversation], [{ state: 'idle' }, runningAgent.lastTurn, []]);
  });

  test('a turn begun by hand (no agent in it) is ended without an outcome', () => {
    const open: SessionState = { ...foldSession([{ type: 'turn/start' }]) };
    const fork = forkAt({ state: open, agent: INITIAL_AGENT_STATE }, from, AT);
    assert.deepEqual([fork.state.turnOpen, fork.agent.lastTurn], [false, null]);
  });
});

describe('the fork input', () => {
  const valid = forkAt({ state: midTurn, agent: runningAgent }, from, AT);
  const refusal = (input: unknown, run: RunFacts = fresh): string => thrown(SessionInputRejection, () => checkSessionInput(input, run), `${JSON.stringify(input)?.slice(0, 200)} was accepted`).message;

  test("a fork's first run starts from the state it was given, its later runs from the state they carried", () => {
    const input = checkSessionInput({ fork: valid }, fresh);
    assert.deepEqual(runStartState(input), valid.state);
    assert.deepEqual(runStartAgent(input), valid.agent);
    const later = checkSessionInput({ fork: { from, children: valid.children }, carried: INITIAL_SESSION_STATE }, continued);
    assert.deepEqual(runStartState(later), INITIAL_SESSION_STATE);
  });

  test('a fork input is refused, naming the field, when it is not a fork of a top-level session between turns', () => {
    assert.match(refusal({ fork: { ...valid, from: { id: 'x', runId: 'r', eventId: 0 } } }), /fork\.from must be \{"id", "runId", "eventId"\}/);
    assert.match(refusal({ fork: { ...valid, extra: 1 } }), /fork has unknown properties "extra"/);
    assert.match(refusal({ fork: { ...valid, state: { ...valid.state, turnOpen: true } } }), /a fork starts open, between turns and without subagents; got turnOpen true/);
    assert.match(refusal({ fork: { ...valid, agent: { ...valid.agent, queue: [{ id: 1, text: 'x', at: null }] } } }), /a fork's agent starts idle with nothing queued or waiting; got activity "idle", 1 queued/);
    assert.match(refusal({ fork: { ...valid, state: { ...valid.state, todos: [todo(' padded ')] } } }), /fork\.state and fork\.agent must pass the checks of a carried state: .*the forked state/);
    assert.match(refusal({ fork: { ...valid, children: [{ name: 'a', sessionId: 'a/a', task: null, closed: true, counts: null }] } }), /fork\.children\[0\] must be an open subagent/);
    assert.match(refusal({ fork: { from, children: [] } }), /the first run of a fork needs fork\.state and fork\.agent/);
    assert.match(refusal({ fork: valid }, continued), /a continued run carries its state in "carried"/);
    assert.match(refusal({ fork: valid, agent: true, task: 'x' }), /a fork is a top-level session/);
    assert.match(refusal({ fork: valid, carried: valid.state }), /carried state is accepted only in a run that continued/);
  });

  test('any value sent as the fork input is either accepted as a fork or refused with the rule: never another error', () => {
    const anything = fc.oneof(fc.anything(), fc.record({ from: fc.anything(), children: fc.anything(), state: fc.anything(), agent: fc.anything() }, { requiredKeys: [] }));
    fc.assert(
      fc.property(anything, fc.boolean(), (fork, isContinued) => {
        try {
          checkSessionInput({ fork }, isContinued ? continued : fresh);
        } catch (error) {
          if (!(error instanceof SessionInputRejection)) throw error;
        }
      }),
      { numRuns: 500 },
    );
  });

  test('whatever session and agent a fork point holds, the fork it makes is accepted by the fork input check', () => {
    const event: fc.Arbitrary<SessionEvent> = fc.oneof(
      fc.constant<SessionEvent>({ type: 'turn/start' }),
      fc.constant<SessionEvent>({ type: 'turn/end' }),
      fc.constant<SessionEvent>({ type: 'session/close' }),
      fc.constantFrom('a', 'b', 'c').map((name): SessionEvent => ({ type: 'subagent/spawn', name, sessionId: `build-42/${name}` })),
      fc.constantFrom('a', 'b').map((name): SessionEvent => ({ type: 'subagent/closed', sessionId: `build-42/${name}`, counts: { pending: 0, in_progress: 0, completed: 0 } })),
      fc.uniqueArray(fc.constantFrom('Lint', 'Test', 'Ship'), { maxLength: 3 }).map((contents): SessionEvent => ({ type: 'todo/write', todos: contents.map((c) => todo(c, 'in_progress')) })),
    );
    const activity = fc.constantFrom<AgentState['activity']>(
      { state: 'idle' },
      { state: 'starting', messageId: 2 },
      { state: 'calling-model', turn: 1, step: 1 },
      { state: 'running-tools', turn: 1, step: 1, tools: ['todo_write'] },
      { state: 'waiting-approval', turn: 1, step: 1, callIds: ['c1'] },
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 12 }), activity, fc.integer({ min: 0, max: conversation.length }), (events, now, length) => {
        let state: SessionState;
        try {
          state = foldSession(events);
        } catch {
          return; // A spawn that repeats a name breaks the invariant: no session holds such a log.
        }
        const fork = forkAt({ state, agent: { ...runningAgent, conversation: conversation.slice(0, length), activity: now } }, from, AT);
        const input = checkSessionInput({ fork }, fresh);
        assert.deepEqual(runStartState(input), fork.state);
      }),
      { numRuns: 300 },
    );
  });
});

/** The four runs of a recorded session that continued as new three times, and its id. */
function recorded(): { id: string; runs: SessionRun[] } {
  const exported = parseExportedHistory(readFileSync(join(__dirname, '..', 'histories', 'v1-continued-as-new.json'), 'utf8'));
  assert.ok('runs' in exported);
  return { id: exported.sessionId, runs: runsOf(exported).map((history, index) => ({ runId: exported.runs[index]!.runId, history })) };
}

describe('where a fork point is', () => {
  const { id, runs } = recorded();

  test('an event id of a run, of the current run without one, or the newest event', () => {
    const last = runs.at(-1)!;
    assert.deepEqual(resolveForkPoint(id, runs, { eventId: 5, runId: runs[0]!.runId }), { id, runId: runs[0]!.runId, eventId: 5 });
    assert.deepEqual(resolveForkPoint(id, runs, { eventId: 5 }), { id, runId: last.runId, eventId: 5 });
    assert.deepEqual(resolveForkPoint(id, runs), { id, runId: last.runId, eventId: last.history.events!.length });
  });

  test('an event, run or turn the session does not have is refused naming it and what the session has', () => {
    const refused = (at: Parameters<typeof resolveForkPoint>[2]) => thrown(RequestRejectedError, () => resolveForkPoint(id, runs, at), 'accepted');
    const size = runs[0]!.history.events!.length;
    assert.match(refused({ eventId: size + 1, runId: runs[0]!.runId }).message, new RegExp(`has no event ${size + 1}; its events are 1 to ${size} \\[no-such-event\\]`));
    assert.equal(refused({ eventId: 1, runId: 'nope' }).rule, 'no-such-run');
    assert.equal(refused({ beforeTurn: 99 }).rule, 'no-such-turn');
    assert.match(thrown(InvalidInputError, () => resolveForkPoint(id, runs, { eventId: 1.5 }), 'accepted').message, /must be a positive integer, got 1.5/);
  });

  test('--before-turn N is the event right before the turn/start that began turn N, in whichever run it is', () => {
    const timeline = foldHistory(
      runs.map((run) => run.history),
      id,
    );
    for (let turn = 1; turn <= timeline.final.turn; turn++) {
      const point = resolveForkPoint(id, runs, { beforeTurn: turn });
      const run = runs.findIndex((r) => r.runId === point.runId) + 1;
      const next = timeline.steps.find((s) => s.run === run && s.eventId === point.eventId + 1);
      assert.deepEqual([next?.event.type, next?.state.turn], ['turn/start', turn], `turn ${turn}`);
      assert.equal(stateAtEvent(timeline, run, point.eventId).turn, turn - 1);
    }
  });
});

describe('the events a fork replays', () => {
  // A run as its history lays it out: a task's commands and accepted updates right after its
  // WorkflowTaskCompleted, then what comes in (a signal, an activity's result), then the next task.
  const events = [
    { workflowExecutionStartedEventAttributes: {} },
    { workflowTaskScheduledEventAttributes: {} },
    { workflowTaskStartedEventAttributes: {} },
    { workflowTaskCompletedEventAttributes: {} },
    { activityTaskScheduledEventAttributes: { workflowTaskCompletedEventId: 4 } },
    { workflowExecutionUpdateAcceptedEventAttributes: {} },
    { workflowExecutionUpdateCompletedEventAttributes: {} },
    { workflowExecutionSignaledEventAttributes: {} },
    { activityTaskStartedEventAttributes: {} },
    { activityTaskCompletedEventAttributes: {} },
    { workflowTaskScheduledEventAttributes: {} },
    { workflowTaskStartedEventAttributes: {} },
    { workflowTaskCompletedEventAttributes: {} },
    { startChildWorkflowExecutionInitiatedEventAttributes: { workflowTaskCompletedEventId: 13 } },
    { startChildWorkflowExecutionFailedEventAttributes: { workflowTaskCompletedEventId: 13 } },
    { workflowExecutionSignaledEventAttributes: {} },
  ].map((event) => temporal.api.history.v1.HistoryEvent.fromObject(event));

  test('through the end of the task that made the event or took it in, with all that task sent; the whole run after the last task', () => {
    const expected = [7, 7, 7, 7, 7, 7, 7, 14, 14, 14, 14, 14, 14, 14, 16, 16];
    assert.deepEqual(
      events.map((_, index) => eventsThroughTaskOf(events, index + 1)),
      expected,
    );
  });
});
