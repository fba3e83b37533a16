import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countTodos, renderCounts, renderTodoList, STATUS_MARKS, type TodoItem } from '../../src/todo';

const list: TodoItem[] = [
  { content: 'Plan', status: 'completed' },
  { content: 'Build', status: 'in_progress' },
  { content: 'Test', status: 'pending' },
  { content: 'Ship', status: 'pending' },
];

describe('countTodos', () => {
  test('counts the todos in each status', () => {
    assert.deepStrictEqual(countTodos(list), { pending: 2, in_progress: 1, completed: 1 });
  });

  test('an absent list counts as all zeros', () => {
    assert.deepStrictEqual(countTodos(null), { pending: 0, in_progress: 0, completed: 0 });
  });

  test('an empty list counts as all zeros', () => {
    assert.deepStrictEqual(countTodos([]), { pending: 0, in_progress: 0, completed: 0 });
  });

  test('counts several in_progress todos', () => {
    const parallel: TodoItem[] = [
      { content: 'a', status: 'in_progress' },
      { content: 'b', status: 'in_progress' },
      { content: 'c', status: 'in_progress' },
    ];
    assert.deepStrictEqual(countTodos(parallel), { pending: 0, in_progress: 3, completed: 0 });
  });

  test('every call returns a fresh object', () => {
    const first = countTodos(null);
    first.pending = 99;
    assert.equal(countTodos(null).pending, 0);
  });
});

describe('renderCounts', () => {
  test('reads exactly as the confirmation line a model sees', () => {
    assert.equal(renderCounts({ pending: 2, in_progress: 1, completed: 0 }), 'Updated todo list: 2 pending, 1 in progress, 0 completed');
  });

  test('renders the counts of a list in pending, in progress, completed order', () => {
    assert.equal(renderCounts(countTodos(list)), 'Updated todo list: 2 pending, 1 in progress, 1 completed');
  });

  test('renders an absent list as zeros', () => {
    assert.equal(renderCounts(countTodos(null)), 'Updated todo list: 0 pending, 0 in progress, 0 completed');
  });
});

describe('renderTodoList', () => {
  test('marks each todo by its status, one per line', () => {
    assert.equal(renderTodoList(list), '[x] Plan\n[>] Build\n[ ] Test\n[ ] Ship');
  });

  test('the marks are distinct for the three statuses', () => {
    assert.deepStrictEqual({ ...STATUS_MARKS }, { pending: '[ ]', in_progress: '[>]', completed: '[x]' });
    assert.ok(Object.isFrozen(STATUS_MARKS));
  });

  test('indents every line', () => {
    assert.equal(renderTodoList(list.slice(0, 2), '  '), '  [x] Plan\n  [>] Build');
  });

  test('says when there is no list in the current turn', () => {
    assert.equal(renderTodoList(null), '(no todo list in the current turn)');
    assert.equal(renderTodoList(null, '> '), '> (no todo list in the current turn)');
  });

  test('says when the list is empty', () => {
    assert.equal(renderTodoList([]), '(empty todo list)');
    assert.equal(renderTodoList([], '\t'), '\t(empty todo list)');
  });
});
