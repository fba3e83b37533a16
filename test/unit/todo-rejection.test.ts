import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeValue, formatPath, Rejection, type RejectionProblem } from '../../src/todo';

const problem = (i: number): RejectionProblem => ({ rule: 'empty-content', path: `todos[${i}].content`, detail: `detail ${i}` });

describe('Rejection', () => {
  test('a single problem reads "todo_write rejected:" then the detail and the rule', () => {
    const error = new Rejection([{ rule: 'session-closed', path: 'arguments', detail: 'the session is closed' }]);
    assert.equal(error.message, 'todo_write rejected: the session is closed [session-closed]');
    assert.equal(error.rule, 'session-closed');
    assert.equal(error.name, 'Rejection');
    assert.ok(error instanceof Error);
  });

  test('several problems are counted in the head and separated by semicolons', () => {
    const error = new Rejection([problem(0), { rule: 'shape', path: 'todos', detail: 'bad' }]);
    assert.equal(error.message, 'todo_write rejected (2 problems): detail 0 [empty-content]; bad [shape]');
    assert.equal(error.rule, 'empty-content');
  });

  test('the rule is the rule of the first problem and every problem is kept', () => {
    const problems = Array.from({ length: 25 }, (_, i) => problem(i));
    const error = new Rejection(problems);
    assert.deepStrictEqual(error.problems, problems);
    assert.ok(error.message.endsWith('detail 9 [empty-content]; …and 15 more problems'), error.message);
  });

  test('a rejection with no problem cannot be made', () => {
    assert.throws(() => new Rejection([]), RangeError);
  });
});

describe('formatPath', () => {
  test('an empty path is the whole arguments', () => {
    assert.equal(formatPath([]), 'arguments');
  });

  test('indexes are bracketed and properties dotted', () => {
    assert.equal(formatPath(['todos', 2, 'content']), 'todos[2].content');
    assert.equal(formatPath(['todos']), 'todos');
    assert.equal(formatPath([0, 'a', 1, 2]), '[0].a[1][2]');
  });
});

describe('describeValue', () => {
  test('renders values as JSON', () => {
    assert.equal(describeValue('a "b"'), '"a \\"b\\""');
    assert.equal(describeValue(null), 'null');
    assert.equal(describeValue(3), '3');
    assert.equal(describeValue({ a: 1 }), '{"a":1}');
  });

  test('renders undefined and bigints', () => {
    assert.equal(describeValue(undefined), 'undefined');
    assert.equal(describeValue(12n), '12n');
  });

  test('says how long an array is', () => {
    assert.equal(describeValue([1, 2]), 'an array of 2: [1,2]');
  });

  test('cuts long renderings at 80 characters', () => {
    const text = describeValue('x'.repeat(10_000));
    assert.equal(text.length, 80);
    assert.ok(text.endsWith('...'));
    const array = describeValue(Array.from({ length: 100_000 }, (_, i) => i));
    assert.equal(array.length, 80);
    assert.ok(array.startsWith('an array of 100000: [0,1,2'), array);
  });

  test('escapes lone surrogates and control characters', () => {
    assert.equal(describeValue('a\uD800'), '"a\\ud800"');
    assert.equal(describeValue('\u0000'), '"\\u0000"');
  });

  test('survives values JSON cannot render', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    assert.equal(describeValue(cyclic), '[object Object]');
    assert.equal(describeValue(Symbol('s')), 'Symbol(s)');
  });
});
