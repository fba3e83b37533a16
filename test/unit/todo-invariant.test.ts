import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertTodoInvariant, InvariantViolation, type TodoItem } from '../../src/todo';

const WHERE = 'todo/write at event 12';

function violation(value: unknown, where = WHERE): InvariantViolation {
  try {
    assertTodoInvariant(value, where);
  } catch (error) {
    if (error instanceof InvariantViolation) return error;
    throw error;
  }
  assert.fail(`expected an InvariantViolation for ${JSON.stringify(value)}`);
}

function assertViolation(value: unknown, ...fragments: string[]): InvariantViolation {
  const error = violation(value);
  assert.equal(error.name, 'InvariantViolation');
  assert.equal(error.where, WHERE);
  assert.ok(error.message.startsWith(`durable todo invariant broken by ${WHERE}: `), error.message);
  for (const fragment of fragments) assert.ok(error.message.includes(fragment), `${JSON.stringify(fragment)} not in: ${error.message}`);
  return error;
}

describe('assertTodoInvariant', () => {
  test('a valid list passes silently', () => {
    const todos: TodoItem[] = [
      { content: 'Run lint', status: 'completed' },
      { content: 'Fix types', status: 'in_progress' },
      { content: 'Write tests', status: 'pending' },
    ];
    assert.equal(assertTodoInvariant(todos, WHERE), undefined);
  });

  test('an empty list passes', () => {
    assert.doesNotThrow(() => assertTodoInvariant([], WHERE));
  });

  test('a list read back from JSON passes', () => {
    assert.doesNotThrow(() => assertTodoInvariant(JSON.parse('[{"status":"pending","content":"a"}]'), WHERE));
  });

  test('any number of in_progress todos passes: the invariant is silent on the parallel policy', () => {
    const todos = Array.from({ length: 50 }, (_, i) => ({ content: `t${i}`, status: 'in_progress' }));
    assert.doesNotThrow(() => assertTodoInvariant(todos, WHERE));
  });

  test('a value that is not an array is a violation showing the value', () => {
    assertViolation(null, 'todos must be an array', 'got null');
    assertViolation({ todos: [] }, 'todos must be an array', '{"todos":[]}');
    assertViolation('[]', 'todos must be an array', '"[]"');
    assertViolation(undefined, 'todos must be an array', 'undefined');
  });

  test('an entry that is not an object is a violation naming its index', () => {
    assertViolation([{ content: 'a', status: 'pending' }, 'b'], 'todos[1] must be an object', '"b"');
    assertViolation([null], 'todos[0] must be an object', 'null');
    assertViolation([['a', 'pending']], 'todos[0] must be an object');
  });

  test('an entry with an extra key is a violation naming the index and the key', () => {
    assertViolation([{ content: 'a', status: 'pending' }, { content: 'b', status: 'pending', priority: 'high' }], 'todos[1]', 'priority');
    assertViolation([{ id: 1, content: 'a', status: 'pending' }], 'todos[0]', 'id');
  });

  test('an own __proto__ key is a violation', () => {
    assertViolation(JSON.parse('[{"content":"a","status":"pending","__proto__":{}}]'), 'todos[0]', '__proto__');
  });

  test('an empty content is a violation naming the index', () => {
    assertViolation([{ content: 'a', status: 'pending' }, { content: '', status: 'pending' }], 'todos[1].content', '""');
  });

  test('a missing or non-string content is a violation naming the index', () => {
    assertViolation([{ status: 'pending' }], 'todos[0].content', 'undefined');
    assertViolation([{ content: 3, status: 'pending' }], 'todos[0].content', 'got 3');
  });

  test('an untrimmed content is a violation naming the index and the value', () => {
    assertViolation([{ content: ' a', status: 'pending' }], 'todos[0].content', '" a"');
    assertViolation([{ content: 'a', status: 'pending' }, { content: 'b\n', status: 'pending' }], 'todos[1].content', '"b\\n"');
    assertViolation([{ content: '   ', status: 'pending' }], 'todos[0].content');
  });

  test('a repeated content is a violation naming the index and the text', () => {
    assertViolation(
      [
        { content: 'a', status: 'pending' },
        { content: 'b', status: 'pending' },
        { content: 'a', status: 'completed' },
      ],
      'todos[2].content repeats',
      '"a"',
    );
  });

  test('an unknown, missing or differently cased status is a violation naming the index and the value', () => {
    assertViolation([{ content: 'a', status: 'done' }], 'todos[0].status', '"done"');
    assertViolation([{ content: 'a', status: 'pending' }, { content: 'b' }], 'todos[1].status', 'undefined');
    assertViolation([{ content: 'a', status: 'In_Progress' }], 'todos[0].status', '"In_Progress"');
  });

  test('the first broken entry is the one named', () => {
    const error = assertViolation([{ content: 'ok', status: 'pending' }, { content: 'x', status: 'nope' }, 7], 'todos[1]');
    assert.ok(!error.message.includes('todos[2]'), error.message);
  });

  test('the message names whatever place is being checked', () => {
    const error = violation(7, 'state carried into a new run');
    assert.equal(error.where, 'state carried into a new run');
    assert.ok(error.message.includes('state carried into a new run'), error.message);
  });

  test('a long offending value is cut short in the message', () => {
    const error = assertViolation([{ content: ` ${'x'.repeat(5000)}`, status: 'pending' }], 'todos[0].content');
    assert.ok(error.message.length < 300, `message is ${error.message.length} characters`);
  });

  test('an InvariantViolation is an Error', () => {
    assert.ok(violation(null) instanceof Error);
  });
});

test('a sparse array fails the invariant at its first hole instead of skipping it', () => {
  const sparse: unknown[] = [{ content: 'a', status: 'pending' }];
  sparse.length = 2;
  assert.throws(() => assertTodoInvariant(sparse, 'sparse state'), /sparse state: todos\[1\] must be an object, got undefined/);
});
