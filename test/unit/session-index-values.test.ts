import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { jsonUtf8Length, type TodoItem } from '../../src/todo';
import {
  applySessionEvent,
  changedIndexValues,
  IN_PROGRESS_CONTENT_BYTES,
  IN_PROGRESS_CONTENT_CHARS,
  inProgressContent,
  INITIAL_SESSION_STATE,
  sessionIndexValues,
  type SessionEvent,
} from '../../src/session';

const item = (content: string, status: TodoItem['status'] = 'in_progress'): TodoItem => ({ content, status });

describe("a session's search attributes", () => {
  test('the in-progress contents are the todos in progress, in list order, and nothing else', () => {
    assert.deepEqual(inProgressContent([item('A', 'completed'), item('B'), item('C', 'pending'), item('D')]), ['B', 'D']);
    assert.deepEqual(inProgressContent(null), []);
    assert.deepEqual(inProgressContent([]), []);
  });

  test('a content longer than 200 characters is cut on a character, never inside one, and ends in an ellipsis', () => {
    const emoji = '😀'.repeat(300);
    const [cut] = inProgressContent([item(emoji)]);
    assert.equal([...cut!].length, IN_PROGRESS_CONTENT_CHARS);
    assert.ok(cut!.endsWith('…'));
    assert.equal(cut!.slice(0, -1), '😀'.repeat(IN_PROGRESS_CONTENT_CHARS - 1), 'no surrogate pair is split');
    assert.deepEqual(inProgressContent([item('y'.repeat(IN_PROGRESS_CONTENT_CHARS))]), ['y'.repeat(IN_PROGRESS_CONTENT_CHARS)], 'exactly 200 is kept whole');
  });

  test('property: whatever the list, the value stays within 1 KB of JSON (Temporal refuses one over 2 KB) and is a prefix of the todos in progress', () => {
    const content = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1000 });
    const list = fc.uniqueArray(fc.record({ content, status: fc.constantFrom('pending', 'in_progress', 'completed') as fc.Arbitrary<TodoItem['status']> }), {
      selector: (todo) => todo.content,
      maxLength: 60,
    });
    fc.assert(
      fc.property(list, (todos) => {
        const value = inProgressContent(todos);
        assert.ok(jsonUtf8Length(value) <= IN_PROGRESS_CONTENT_BYTES);
        const working = todos.filter((todo) => todo.status === 'in_progress');
        assert.ok(value.length <= working.length);
        value.forEach((text, index) => {
          const whole = working[index]!.content;
          assert.ok(text === whole || (text.endsWith('…') && whole.startsWith(text.slice(0, -1))), `${JSON.stringify(text)} comes from ${JSON.stringify(whole)}`);
        });
        // As many as fit: the next one in progress would not.
        if (value.length < working.length && value.length > 0) assert.ok(jsonUtf8Length([...value, inProgressContent([working[value.length]!])[0]]) > IN_PROGRESS_CONTENT_BYTES);
      }),
      { numRuns: 300 },
    );
  });

  test('the number of subagents and the contents follow the state, and only an applied event changes them, so no upsert is added', () => {
    const events: SessionEvent[] = [
      { type: 'todo/write', todos: [item('Plan', 'completed'), item('Build')] },
      { type: 'subagent/spawn', name: 'tests', sessionId: 'root/tests' },
      { type: 'signal/ignored', name: 'todo_write', reason: 'sent as a signal' },
      { type: 'todo/write', todos: [item('Plan', 'completed'), item('Build', 'completed')] },
    ];
    let state = INITIAL_SESSION_STATE;
    let values = sessionIndexValues(state, null);
    assert.deepEqual([values.AgentSessionInProgressContent, values.AgentSessionSubagents], [[], 0]);
    const seen: Array<[string[], number, string[]]> = [];
    for (const event of events) {
      state = applySessionEvent(state, event);
      const next = sessionIndexValues(state, null);
      seen.push([next.AgentSessionInProgressContent, next.AgentSessionSubagents, Object.keys(changedIndexValues(values, next)).sort()]);
      values = next;
    }
    assert.deepEqual(seen, [
      [['Build'], 0, ['AgentSessionCompleted', 'AgentSessionInProgress', 'AgentSessionInProgressContent', 'AgentSessionVersion'].sort()],
      [['Build'], 1, ['AgentSessionSubagents', 'AgentSessionVersion'].sort()],
      [['Build'], 1, []],
      [[], 1, ['AgentSessionCompleted', 'AgentSessionInProgress', 'AgentSessionInProgressContent', 'AgentSessionVersion'].sort()],
    ]);
  });

  test('an equal list is no change; another list is', () => {
    const base = sessionIndexValues(INITIAL_SESSION_STATE, null);
    assert.deepEqual(changedIndexValues(base, { ...base, AgentSessionInProgressContent: [] }), {});
    assert.deepEqual(changedIndexValues({ ...base, AgentSessionInProgressContent: ['A'] }, { ...base, AgentSessionInProgressContent: ['A'] }), {});
    assert.deepEqual(changedIndexValues({ ...base, AgentSessionInProgressContent: ['A'] }, { ...base, AgentSessionInProgressContent: ['B'] }), { AgentSessionInProgressContent: ['B'] });
  });
});
