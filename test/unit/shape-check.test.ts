import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { checkShape, DEFAULT_TODO_BOUNDS, TODO_STATUSES, zodShapeIssues, type TodoBounds } from '../../src/todo';

const SMALL: TodoBounds = { maxItems: 3, maxContentLength: 4, maxListBytes: 1e9 };

// Values as they arrive through JSON payloads: what a model, a client or a foreign SDK can send.
const text = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('a', 'abcd', 'abcde', '😀😀😀😀', '😀😀😀😀😀', '', ' '));
const key = fc.oneof(fc.constantFrom('content', 'status', 'todos', 'priority', '__proto__', 'constructor', 'toString', ''), fc.string({ maxLength: 3 }));
const scalar = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), text);
const status = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...TODO_STATUSES) }, { weight: 1, arbitrary: scalar });
const withExtras = (base: fc.Arbitrary<Record<string, unknown>>) =>
  fc.tuple(base, fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 1 })), { maxLength: 2 })).map(([object, extras]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(object)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    for (const [k, v] of extras) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  });
const item = fc.oneof(
  { weight: 6, arbitrary: withExtras(fc.record({ content: fc.oneof({ weight: 5, arbitrary: text }, { weight: 1, arbitrary: scalar }), status }, { requiredKeys: [] })) },
  { weight: 1, arbitrary: fc.oneof(scalar, fc.array(scalar, { maxLength: 2 })) },
);
const args = fc.oneof(
  { weight: 8, arbitrary: withExtras(fc.record({ todos: fc.oneof({ weight: 6, arbitrary: fc.array(item, { maxLength: 5 }) }, { weight: 1, arbitrary: scalar }) }, { requiredKeys: [] })) },
  { weight: 1, arbitrary: fc.oneof(scalar, fc.array(scalar, { maxLength: 2 })) },
);

/**
 * zod's issues, less one quirk of zod 4: after saying a value has the wrong type, it still
 * applies that place's length bound to it when it has a length (a string where the list
 * should be, an array where a content should be) and reports it as too long too. The
 * hand-written check says only that the type is wrong.
 */
function zodIssues(value: unknown, bounds: TodoBounds): ReturnType<typeof zodShapeIssues> {
  const issues = zodShapeIssues(value, bounds);
  const wrongType = new Set(issues.filter((i) => i.code === 'invalid_type').map((i) => JSON.stringify(i.path)));
  return issues.filter((issue) => !(issue.code === 'too_big' && wrongType.has(JSON.stringify(issue.path))));
}

describe('the hand-written shape check and the zod schema', () => {
  test('accept and refuse exactly the same arguments, with the same issues in the same order (small bounds)', () => {
    fc.assert(fc.property(args, (value) => assert.deepStrictEqual(checkShape(value, SMALL), zodIssues(value, SMALL))), { numRuns: 5000 });
  });

  test('the one difference is the quirk above, and it never changes whether arguments are refused or the first rule', () => {
    const quirk = { todos: 'abcde' };
    assert.equal(zodShapeIssues(quirk, SMALL).length, 2);
    assert.deepStrictEqual(checkShape(quirk, SMALL), [{ code: 'invalid_type', path: ['todos'], expected: 'array' }]);
  });

  test('agree under the default bounds, and on arguments that went through JSON', () => {
    fc.assert(
      fc.property(args, (value) => {
        const wire = JSON.parse(JSON.stringify(value) ?? 'null') as unknown;
        assert.deepStrictEqual(checkShape(wire, DEFAULT_TODO_BOUNDS), zodIssues(wire, DEFAULT_TODO_BOUNDS));
      }),
      { numRuns: 2000 },
    );
  });

  test('a list longer than the bound is one issue, whatever its items', () => {
    const todos = Array.from({ length: 4 }, () => 7);
    assert.deepStrictEqual(checkShape({ todos }, SMALL), [{ code: 'too_big', path: ['todos'], origin: 'array', maximum: 3 }]);
    assert.deepStrictEqual(checkShape({ todos }, SMALL), zodShapeIssues({ todos }, SMALL));
  });
});
