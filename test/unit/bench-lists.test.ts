import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { acceptTodoWrite, countTodos } from '../../src/todo';
import { listJsonBytes, todoList } from '../../bench/setup';
import { PARALLEL, SINGLE } from './domain-fixtures';

// The bench's lists: `bytes` takes its constant from one-item writes and holds it against every
// other size, so a write of each size must move the counts (and with them the session's search
// attributes) the same way.
describe('bench todo lists', () => {
  const SIZES = [1, 2, 3, 10, 30, 300];

  test('every list is one the session accepts under either policy', () => {
    for (const size of SIZES) {
      for (let step = 0; step < 2 * size + 3; step++) {
        const args = todoList(size, step);
        assert.equal(args.todos.length, size);
        assert.deepEqual(acceptTodoWrite(args, SINGLE), args.todos, `size ${size}, step ${step}`);
        assert.deepEqual(acceptTodoWrite(args, PARALLEL), args.todos, `size ${size}, step ${step}`);
      }
    }
  });

  test('every write changes exactly two of the counts, whatever the size', () => {
    for (const size of SIZES) {
      for (let step = 0; step < 2 * size + 3; step++) {
        const before = countTodos(todoList(size, step).todos);
        const after = countTodos(todoList(size, step + 1).todos);
        const moved = (['pending', 'in_progress', 'completed'] as const).filter((status) => before[status] !== after[status]);
        assert.equal(moved.length, 2, `size ${size}, step ${step} → ${step + 1}: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
      }
    }
  });

  test('a one-item list keeps its content and so its size within a few bytes', () => {
    const sizes = [0, 1, 2].map((step) => listJsonBytes(todoList(1, step)));
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 4, `one-item list JSON bytes: ${sizes.join(', ')}`);
  });
});
