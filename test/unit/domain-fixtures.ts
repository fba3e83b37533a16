/** What the pure-domain unit tests share: the two policies, and catching the one error a call must throw. */
import assert from 'node:assert/strict';
import type { TodoPolicy } from '../../src/todo';

/** One todo in progress at a time. */
export const SINGLE: TodoPolicy = { allowParallelInProgress: false };
/** Several todos in progress at once. */
export const PARALLEL: TodoPolicy = { allowParallelInProgress: true };

/** The error of class `kind` that `fn` throws; fails the test when it returns, and rethrows any other error. */
export function thrown<E extends Error>(kind: abstract new (...args: never[]) => E, fn: () => unknown, unexpected: string): E {
  try {
    fn();
  } catch (error) {
    if (error instanceof kind) return error;
    throw error;
  }
  return assert.fail(unexpected);
}
