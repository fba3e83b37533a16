import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertTodoPolicy, POLICY_SETTING } from '../../src/todo';

function typeError(value: unknown, where?: string): TypeError {
  try {
    if (where === undefined) assertTodoPolicy(value);
    else assertTodoPolicy(value, where);
  } catch (error) {
    if (error instanceof TypeError) return error;
    throw error;
  }
  assert.fail(`expected a TypeError for ${String(value)}`);
}

describe('assertTodoPolicy', () => {
  test('the setting is named allowParallelInProgress', () => {
    assert.equal(POLICY_SETTING, 'allowParallelInProgress');
  });

  test('true and false are both accepted', () => {
    assert.doesNotThrow(() => assertTodoPolicy({ allowParallelInProgress: true }));
    assert.doesNotThrow(() => assertTodoPolicy({ allowParallelInProgress: false }));
  });

  test('other options beside the policy are allowed', () => {
    assert.doesNotThrow(() => assertTodoPolicy({ allowParallelInProgress: false, taskQueue: 'sessions' }));
  });

  test('a missing setting is a TypeError naming allowParallelInProgress and saying there is no default', () => {
    const error = typeError({});
    assert.ok(error.message.includes('allowParallelInProgress'), error.message);
    assert.ok(error.message.includes('required'), error.message);
    assert.ok(error.message.includes('no default'), error.message);
  });

  test('an explicitly undefined setting counts as missing', () => {
    assert.ok(typeError({ allowParallelInProgress: undefined }).message.includes('is required'));
  });

  test('missing options altogether are a TypeError naming the setting', () => {
    for (const value of [undefined, null, 'true', 1]) {
      assert.ok(typeError(value).message.includes('allowParallelInProgress'));
    }
  });

  test('the string "true" is a TypeError naming the setting and showing the value', () => {
    const error = typeError({ allowParallelInProgress: 'true' });
    assert.ok(error.message.includes('allowParallelInProgress'), error.message);
    assert.ok(error.message.includes('boolean'), error.message);
    assert.ok(error.message.includes('"true"'), error.message);
  });

  test('the number 1 is a TypeError naming the setting and showing the value', () => {
    const error = typeError({ allowParallelInProgress: 1 });
    assert.ok(error.message.includes('allowParallelInProgress'), error.message);
    assert.ok(error.message.includes('got 1'), error.message);
  });

  test('null and a boxed boolean are not booleans', () => {
    assert.ok(typeError({ allowParallelInProgress: null }).message.includes('got null'));
    assert.ok(typeError({ allowParallelInProgress: new Boolean(true) }).message.includes('must be a boolean'));
  });

  test('the message names where the setting was expected', () => {
    assert.ok(typeError({}, 'the --allow-parallel-in-progress flag').message.includes('the --allow-parallel-in-progress flag'));
    assert.ok(typeError({}).message.includes('the worker options'));
  });
});

test('a policy of an unprintable type is still reported by its setting name', () => {
  assert.throws(() => assertTodoPolicy({ allowParallelInProgress: 1n }), /allowParallelInProgress .* must be a boolean \(true or false\), got 1n \(bigint\)/);
});
