import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  checkSessionInput,
  CONTINUE_AS_NEW_AFTER_RANGE,
  HANDLED_SIGNALS,
  ignoredSignalReason,
  INITIAL_SESSION_STATE,
  SessionInputRejection,
  topLevelIdProblem,
  type RunFacts,
} from '../../src/session';
import * as messages from '../../workflows/messages';

const fresh: RunFacts = { workflowId: 'build-42', parentWorkflowId: undefined, continuedFromRunId: undefined };
const continued: RunFacts = { ...fresh, continuedFromRunId: 'run-1' };
const child: RunFacts = { workflowId: 'build-42/tests', parentWorkflowId: 'build-42', continuedFromRunId: undefined };

function refused(input: unknown, run: RunFacts = fresh): string {
  try {
    checkSessionInput(input, run);
  } catch (error) {
    assert.ok(error instanceof SessionInputRejection);
    return error.message;
  }
  assert.fail(`${JSON.stringify(input)} was accepted`);
}

describe('checkSessionInput', () => {
  test('no input, null and {} are a fresh top-level session', () => {
    for (const input of [undefined, null, {}]) assert.deepEqual(checkSessionInput(input, fresh), {});
  });

  test('continueAsNewAfter is accepted at both ends of its range and refused outside, naming the setting and the range', () => {
    const { min, max } = CONTINUE_AS_NEW_AFTER_RANGE;
    assert.deepEqual(checkSessionInput({ continueAsNewAfter: min }, fresh), { continueAsNewAfter: min });
    assert.deepEqual(checkSessionInput({ continueAsNewAfter: max }, fresh), { continueAsNewAfter: max });
    for (const value of [0, -1, min - 1, max + 1, 1.5, Number.NaN, '500', null, Infinity]) {
      assert.match(refused({ continueAsNewAfter: value }), /continueAsNewAfter must be an integer from 10 to 2000/);
    }
  });

  test('carried state is accepted only in a continued run', () => {
    const carried = { ...INITIAL_SESSION_STATE };
    assert.match(refused({ carried }), /carried state is accepted only in a run that continued/);
    assert.deepEqual(checkSessionInput({ carried }, continued).carried, carried);
  });

  test('a parent must be the workflow that started the run, and the id must be <parent>/<name>', () => {
    assert.deepEqual(checkSessionInput({ parent: { sessionId: 'build-42', name: 'tests' } }, child).parent, { sessionId: 'build-42', name: 'tests' });
    assert.match(refused({ parent: { sessionId: 'build-42', name: 'tests' } }, { ...child, parentWorkflowId: undefined }), /no workflow started it as a child/);
    assert.match(refused({ parent: { sessionId: 'other', name: 'tests' } }, child), /workflow "build-42" started it/);
    assert.match(refused({ parent: { sessionId: 'build-42', name: 'docs' } }, child), /must be <parent>\/<name>/);
    assert.match(refused({ parent: { sessionId: 'build-42' } }, child), /parent must be \{"sessionId", "name"\}/);
    // A continued child run's input was written by the run before it.
    assert.ok(checkSessionInput({ parent: { sessionId: 'build-42', name: 'tests' } }, { ...child, parentWorkflowId: undefined, continuedFromRunId: 'r' }).parent);
  });

  test('a run without a parent refuses an id containing "/"', () => {
    assert.match(refused({}, { ...fresh, workflowId: 'a/b' }), /top-level session id cannot contain it/);
  });

  test('task is bounded, and unknown properties are refused rather than ignored', () => {
    assert.match(refused({ task: 'x'.repeat(4001) }), /task must be a string of at most 4000/);
    assert.match(refused({ task: 7 }), /task must be a string/);
    assert.match(refused({ continueAsNewafter: 100 }), /unknown property "continueAsNewafter"/);
    assert.match(refused([]), /input must be an object/);
    assert.match(refused('x'), /input must be an object/);
  });
});

describe('topLevelIdProblem', () => {
  test('says why an empty id or one with "/" cannot be used, and nothing for a plain one', () => {
    assert.equal(topLevelIdProblem('build-42'), undefined);
    assert.match(topLevelIdProblem('a/b') ?? '', /separates a parent session from its subagents/);
    assert.match(topLevelIdProblem('  ') ?? '', /empty/);
  });
});

describe('ignoredSignalReason', () => {
  test('a todo_write signal is told to send the todo_write Update, with the command', () => {
    const reason = ignoredSignalReason('todo_write', 'demo');
    assert.match(reason, /todo_write is an Update, not a Signal/);
    assert.match(reason, /temporal workflow update execute --workflow-id "demo" --name todo_write --input/);
    assert.match(reason, /agent-sessions write demo/);
  });

  test('the other updates and the queries are named as what they are', () => {
    assert.match(ignoredSignalReason('close', 'demo'), /close is an Update, not a Signal/);
    assert.match(ignoredSignalReason('subagent/spawn', 'demo'), /subagent\/spawn is an Update/);
    assert.match(ignoredSignalReason('todos', 'demo'), /todos is a Query/);
  });

  test('an unknown name lists the signals the session handles, and a huge name is cut', () => {
    const reason = ignoredSignalReason('x'.repeat(10_000), 'demo');
    assert.ok(reason.length < 400, String(reason.length));
    assert.match(reason, /its signals are turn\/start, turn\/end, session\/close, subagent\/closed/);
  });

  test('the names the reasons give are the wire names of workflows/messages.ts', () => {
    const wire = new Map(Object.values(messages).flatMap((m) => (typeof m === 'object' && m !== null && 'name' in m && 'type' in m ? [[m.name as string, m.type as string]] : [])));
    for (const name of HANDLED_SIGNALS) assert.equal(wire.get(name), 'signal', name);
    for (const name of ['todo_write', 'close', 'subagent/spawn']) assert.equal(wire.get(name), 'update', name);
    for (const name of ['todos', 'session']) assert.equal(wire.get(name), 'query', name);
  });
});
