import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  acceptTodoWrite,
  assertTodoInvariant,
  DEFAULT_TODO_BOUNDS,
  jsonUtf8Length,
  Rejection,
  trimTodoWriteArgs,
  type TodoBounds,
  type TodoItem,
  type TodoPolicy,
  type TodoStatus,
} from '../../src/todo';
import { PARALLEL, SINGLE, thrown } from './domain-fixtures';

function rejection(fn: () => unknown): Rejection {
  return thrown(Rejection, fn, 'expected a Rejection, but the write was accepted');
}

function rejectWrite(args: unknown, policy: TodoPolicy = SINGLE, bounds?: TodoBounds): Rejection {
  return rejection(() => (bounds === undefined ? acceptTodoWrite(args, policy) : acceptTodoWrite(args, policy, bounds)));
}

function todo(content: string, status: TodoStatus = 'pending'): TodoItem {
  return { content, status };
}

function pendingList(n: number): TodoItem[] {
  return Array.from({ length: n }, (_, i) => todo(`step ${i}`));
}

function assertOneProblem(error: Rejection, rule: Rejection['rule'], ...fragments: string[]): void {
  assert.equal(error.rule, rule);
  assert.equal(error.problems.length, 1, error.message);
  assert.ok(error.message.startsWith('todo_write rejected: '), error.message);
  assert.ok(error.message.endsWith(`[${rule}]`), error.message);
  for (const fragment of fragments) assert.ok(error.message.includes(fragment), `${JSON.stringify(fragment)} not in: ${error.message}`);
}

describe('acceptTodoWrite: accepted writes', () => {
  test('a well-formed list is returned exactly as sent', () => {
    const todos = [todo('Run lint', 'completed'), todo('Fix types', 'in_progress'), todo('Write tests')];
    assert.deepStrictEqual(acceptTodoWrite({ todos }, SINGLE), todos);
  });

  test('an empty list is accepted and clears the plan', () => {
    assert.deepStrictEqual(acceptTodoWrite({ todos: [] }, SINGLE), []);
  });

  test('the accepted list is a copy, so changing it leaves the arguments as sent', () => {
    const todos = [todo('a'), todo('b')];
    const accepted = acceptTodoWrite({ todos }, SINGLE);
    assert.notEqual(accepted, todos);
    accepted[0]!.content = 'changed';
    assert.equal(todos[0]!.content, 'a');
  });

  test('content with NUL, RTL marks, combining characters and emoji is accepted verbatim', () => {
    const todos = [todo('nul\u0000inside'), todo('\u200Fright-to-left\u202E'), todo('e\u0301 cafe\u0301'), todo('ship 🚀 👨‍👩‍👧')];
    assert.deepStrictEqual(acceptTodoWrite({ todos }, SINGLE), todos);
  });

  test('writing the same list twice gives the same result', () => {
    const args = { todos: [todo('a', 'completed'), todo('b', 'in_progress')] };
    assert.deepStrictEqual(acceptTodoWrite(args, SINGLE), acceptTodoWrite(args, SINGLE));
  });

  test('exactly the maximum number of items is accepted', () => {
    assert.equal(acceptTodoWrite({ todos: pendingList(DEFAULT_TODO_BOUNDS.maxItems) }, SINGLE).length, 500);
  });

  test('a content of exactly the maximum length is accepted', () => {
    const content = 'x'.repeat(DEFAULT_TODO_BOUNDS.maxContentLength);
    assert.deepStrictEqual(acceptTodoWrite({ todos: [todo(content)] }, SINGLE), [todo(content)]);
  });

  test('a content of astral characters far over the limit is rejected as content-too-long', () => {
    assertOneProblem(rejectWrite({ todos: [todo('😀'.repeat(1001))] }), 'content-too-long', 'todos[0].content', 'limit of 1000');
  });

  // Lengths count code points, as JSON Schema's maxLength does: the limit the model is shown is the one enforced.
  test('content length is counted in code points: 1000 emoji fit the limit, 1001 exceed it and the message counts 1001', () => {
    assert.equal(acceptTodoWrite({ todos: [todo('😀'.repeat(1000))] }, SINGLE).length, 1);
    assertOneProblem(rejectWrite({ todos: [todo('😀'.repeat(1001))] }), 'content-too-long', 'todos[0].content', 'is 1001 characters', 'limit of 1000');
  });
});

describe('acceptTodoWrite: shape', () => {
  test('null is rejected as shape and the message shows null', () => {
    assertOneProblem(rejectWrite(null), 'shape', 'the arguments must be an object', 'got null');
  });

  test('undefined is rejected as shape', () => {
    assertOneProblem(rejectWrite(undefined), 'shape', 'the arguments must be an object');
  });

  test('a string instead of an object is rejected as shape and the message shows the string', () => {
    assertOneProblem(rejectWrite('todos'), 'shape', 'the arguments must be an object', '"todos"');
  });

  test('a bare array instead of the arguments object is rejected as shape', () => {
    assertOneProblem(rejectWrite([todo('a')]), 'shape', 'the arguments must be an object', 'an array of 1');
  });

  test('missing todos is rejected as shape and says it is missing', () => {
    assertOneProblem(rejectWrite({}), 'shape', 'todos must be an array', 'missing');
  });

  test('todos that is not an array is rejected as shape and shows the value', () => {
    assertOneProblem(rejectWrite({ todos: 'write tests' }), 'shape', 'todos must be an array', '"write tests"');
    assertOneProblem(rejectWrite({ todos: { content: 'a', status: 'pending' } }), 'shape', 'todos must be an array');
  });

  test('an entry that is not an object is rejected as shape naming its index and value', () => {
    assertOneProblem(rejectWrite({ todos: [todo('a'), 42] }), 'shape', 'todos[1] must be an object', 'got 42');
    assertOneProblem(rejectWrite({ todos: [null] }), 'shape', 'todos[0] must be an object', 'got null');
    assertOneProblem(rejectWrite({ todos: ['a'] }), 'shape', 'todos[0] must be an object', '"a"');
  });

  test('an entry without content is rejected as shape and says content is missing', () => {
    assertOneProblem(rejectWrite({ todos: [{ status: 'pending' }] }), 'shape', 'todos[0].content must be a string', 'missing');
  });

  test('a non-string content is rejected as shape naming the path and value', () => {
    assertOneProblem(rejectWrite({ todos: [todo('a'), { content: 7, status: 'pending' }] }), 'shape', 'todos[1].content must be a string', 'got 7');
  });

  test('an entry without status is rejected as shape', () => {
    assertOneProblem(rejectWrite({ todos: [{ content: 'a' }] }), 'shape', 'todos[0].status');
  });

  test('an unknown status is rejected as shape listing the allowed ones and the value sent', () => {
    const error = rejectWrite({ todos: [todo('a'), { content: 'b', status: 'done' }] });
    assertOneProblem(error, 'shape', 'todos[1].status', '"pending"', '"in_progress"', '"completed"', 'got "done"');
  });

  test('status names are case-sensitive', () => {
    assertOneProblem(rejectWrite({ todos: [{ content: 'a', status: 'PENDING' }] }), 'shape', 'todos[0].status', '"PENDING"');
  });

  test('an extra property such as priority on an item is rejected, not ignored', () => {
    const error = rejectWrite({ todos: [todo('a'), { content: 'b', status: 'pending', priority: 'high' }] });
    assertOneProblem(error, 'shape', 'todos[1]', 'unknown property "priority"', '"content" and "status"');
  });

  test('an id property on an item is rejected: items have no identity', () => {
    assertOneProblem(rejectWrite({ todos: [{ id: '1', content: 'a', status: 'pending' }] }), 'shape', 'todos[0]', '"id"');
  });

  test('an extra property at the top level is rejected, not ignored', () => {
    assertOneProblem(rejectWrite({ todos: [todo('a')], merge: true }), 'shape', 'the arguments', 'unknown property "merge"', '"todos"');
  });

  test('an own __proto__ or constructor key is reported as an unknown property', () => {
    const topLevel = JSON.parse('{"todos":[],"__proto__":{"polluted":true}}') as unknown;
    assertOneProblem(rejectWrite(topLevel), 'shape', '"__proto__"');
    const onItem = JSON.parse('{"todos":[{"content":"a","status":"pending","constructor":1}]}') as unknown;
    assertOneProblem(rejectWrite(onItem), 'shape', 'todos[0]', '"constructor"');
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  test('several unknown properties are named together', () => {
    assertOneProblem(rejectWrite({ todos: [{ content: 'a', status: 'pending', priority: 1, id: 2 }] }), 'shape', '"priority"', '"id"');
  });

  test('several shape problems are listed in one rejection', () => {
    const error = rejectWrite({ todos: [{ content: 'a', status: 'pending', priority: 1 }, { content: 'b', status: 'done' }, 3] });
    assert.equal(error.rule, 'shape');
    assert.equal(error.problems.length, 3);
    assert.ok(error.message.startsWith('todo_write rejected (3 problems): '), error.message);
    for (const path of ['todos[0]', 'todos[1].status', 'todos[2]']) assert.ok(error.message.includes(path), error.message);
    assert.deepStrictEqual(
      error.problems.map((p) => p.path),
      ['todos[0]', 'todos[1].status', 'todos[2]'],
    );
  });
});

describe('acceptTodoWrite: values', () => {
  test('an empty content is rejected as empty-content', () => {
    assertOneProblem(rejectWrite({ todos: [todo('')] }), 'empty-content', 'todos[0].content', 'empty');
  });

  test('a content that is only whitespace is rejected as empty-content after trimming, showing what was sent', () => {
    assertOneProblem(rejectWrite({ todos: [todo('a'), todo(' \t\n ')] }), 'empty-content', 'todos[1].content', '" \\t\\n "');
  });

  test('whitespace-only content stays empty-content after the tool layer trims it', () => {
    assertOneProblem(rejectWrite(trimTodoWriteArgs({ todos: [todo('\u00A0\u3000\uFEFF')] })), 'empty-content', 'todos[0].content');
  });

  test('an untrimmed content is rejected as untrimmed-content and the message shows the trimmed text to send', () => {
    assertOneProblem(rejectWrite({ todos: [todo('  Run lint ')] }), 'untrimmed-content', 'todos[0].content', '"  Run lint "', '"Run lint"');
  });

  test('unicode whitespace such as a no-break space counts as untrimmed', () => {
    assertOneProblem(rejectWrite({ todos: [todo('a\u00A0')] }), 'untrimmed-content', 'todos[0].content');
  });

  test('the same untrimmed content is accepted once the tool layer has trimmed it, and stored trimmed', () => {
    assert.deepStrictEqual(acceptTodoWrite(trimTodoWriteArgs({ todos: [todo('  Run lint \n')] }), SINGLE), [todo('Run lint')]);
  });

  test('a content that repeats exactly is rejected as duplicate-content naming both indexes and the text', () => {
    const error = rejectWrite({ todos: [todo('a', 'completed'), todo('b'), todo('a', 'pending')] });
    assertOneProblem(error, 'duplicate-content', 'todos[2].content', '"a"', 'todos[0].content');
  });

  test('a content that repeats after trimming is rejected as duplicate-content', () => {
    const error = rejectWrite(trimTodoWriteArgs({ todos: [todo('Run lint'), todo('  Run lint  ')] }));
    assertOneProblem(error, 'duplicate-content', 'todos[1].content', '"Run lint"', 'todos[0].content');
  });

  test('an untrimmed repeat is reported both as untrimmed and as a duplicate', () => {
    const error = rejectWrite({ todos: [todo('a'), todo(' a')] });
    assert.deepStrictEqual(
      error.problems.map((p) => [p.rule, p.path]),
      [
        ['untrimmed-content', 'todos[1].content'],
        ['duplicate-content', 'todos[1].content'],
      ],
    );
  });

  test('every repeat of a content names the first occurrence', () => {
    const error = rejectWrite({ todos: [todo('a'), todo('a'), todo('a')] });
    assert.deepStrictEqual(
      error.problems.map((p) => p.rule),
      ['duplicate-content', 'duplicate-content'],
    );
    assert.ok(error.problems.every((p) => p.detail.includes('repeats todos[0].content')), error.message);
  });

  for (const [first, second] of [
    ['Fix the build', 'fix the build'],
    ['修复 X', '修复 x'],
    ['Run  lint', 'Run lint'],
    ['Caf\u00E9', 'Cafe\u0301'],
    ['ＡＢＣ', 'ABC'],
    ['Straße', 'STRASSE'],
    ['Tab\tseparated', 'Tab separated'],
  ] as const) {
    test(`${JSON.stringify(first)} and ${JSON.stringify(second)} are near-duplicates: refused, naming both indexes and texts`, () => {
      const rejection = rejectWrite({ todos: [todo('Keep me'), todo(first), todo(second)] });
      assert.equal(rejection.problems.length, 1, rejection.message);
      const [problem] = rejection.problems;
      assert.equal(problem?.rule, 'near-duplicate-content');
      assert.equal(problem?.path, 'todos[2].content');
      assert.ok(problem?.detail.includes('todos[1].content'), problem?.detail);
      assert.ok(problem?.detail.includes(JSON.stringify(first)) && problem.detail.includes(JSON.stringify(second)), problem?.detail);
      assert.match(rejection.message, /\[near-duplicate-content\]/);
    });
  }

  test('an exact repeat is duplicate-content, not also near-duplicate-content', () => {
    const rejection = rejectWrite({ todos: [todo('Run lint'), todo('Run lint')] });
    assert.deepEqual(rejection.problems.map((p) => p.rule), ['duplicate-content']);
  });

  test('contents that differ in words, or only in combining marks that change the letter, stay distinct', () => {
    const todos = [todo('Run lint'), todo('Run the linter'), todo('resume'), todo('résumé'), todo('Fix 1'), todo('Fix 2')];
    assert.deepStrictEqual(acceptTodoWrite({ todos }, SINGLE), todos);
  });

  test('near-duplicates pass the durable invariant: lists written before the rule existed keep replaying', () => {
    assert.doesNotThrow(() => assertTodoInvariant([todo('Fix the build'), todo('fix the build')], 'an old write'));
  });

  test('a lone high surrogate is rejected as malformed-unicode, escaped in the message', () => {
    assertOneProblem(rejectWrite({ todos: [todo('a\uD800b')] }), 'malformed-unicode', 'todos[0].content', '\\ud800');
  });

  test('a lone low surrogate is rejected as malformed-unicode', () => {
    assertOneProblem(rejectWrite({ todos: [todo('x'), todo('\uDC00')] }), 'malformed-unicode', 'todos[1].content');
  });

  test('a reversed surrogate pair is rejected as malformed-unicode', () => {
    assertOneProblem(rejectWrite({ todos: [todo('\uDE00\uD83D')] }), 'malformed-unicode', 'todos[0].content');
  });

  test('a well-formed surrogate pair is accepted', () => {
    assert.deepStrictEqual(acceptTodoWrite({ todos: [todo('\uD83D\uDE00')] }, SINGLE), [todo('😀')]);
  });
});

describe('acceptTodoWrite: parallel policy', () => {
  const two = { todos: [todo('a', 'in_progress'), todo('b', 'pending'), todo('c', 'in_progress')] };

  test('two in_progress todos are rejected as parallel-in-progress when parallel work is not allowed, with the count', () => {
    assertOneProblem(rejectWrite(two, SINGLE), 'parallel-in-progress', 'got 2', 'todos[0]', 'todos[2]');
  });

  test('two in_progress todos are accepted when parallel work is allowed', () => {
    assert.deepStrictEqual(acceptTodoWrite(two, PARALLEL), two.todos);
  });

  test('one in_progress todo is accepted under either policy', () => {
    const one = { todos: [todo('a', 'in_progress'), todo('b')] };
    assert.deepStrictEqual(acceptTodoWrite(one, SINGLE), one.todos);
    assert.deepStrictEqual(acceptTodoWrite(one, PARALLEL), one.todos);
  });

  test('the count in the message is the real number of in_progress todos', () => {
    const todos = Array.from({ length: 7 }, (_, i) => todo(`t${i}`, i % 2 === 0 ? 'in_progress' : 'completed'));
    assertOneProblem(rejectWrite({ todos }, SINGLE), 'parallel-in-progress', 'got 4');
  });

  test(
    'a parallel-in-progress message stays short even when all 500 todos are in_progress',
    () => {
      const todos = Array.from({ length: 500 }, (_, i) => todo(`t${i}`, 'in_progress'));
      const error = rejectWrite({ todos }, SINGLE);
      assert.equal(error.rule, 'parallel-in-progress');
      assert.ok(error.message.includes('got 500'), error.message.slice(0, 200));
      assert.ok(error.message.length < 2048, `message is ${error.message.length} characters`);
    },
  );

  test('all 500 todos in_progress are accepted when parallel work is allowed', () => {
    const todos = Array.from({ length: 500 }, (_, i) => todo(`t${i}`, 'in_progress'));
    assert.equal(acceptTodoWrite({ todos }, PARALLEL).length, 500);
  });
});

describe('acceptTodoWrite: bounds', () => {
  test('501 items are rejected as too-many-items with the count and the limit', () => {
    assertOneProblem(rejectWrite({ todos: pendingList(501) }), 'too-many-items', '501', 'limit of 500');
  });

  test('100,000 items are rejected as too-many-items with a message under 2 KB', () => {
    const error = rejectWrite({ todos: pendingList(100_000) });
    assert.equal(error.rule, 'too-many-items');
    assert.ok(error.message.includes('100000'), error.message);
    assert.ok(error.message.length < 2048, `message is ${error.message.length} characters`);
  });

  test('100,000 malformed items are still rejected as too-many-items with a short message', () => {
    const error = rejectWrite({ todos: Array.from({ length: 100_000 }, (_, i) => ({ content: i, status: 'nope' })) });
    assert.ok(
      error.problems.some((p) => p.rule === 'too-many-items'),
      error.message,
    );
    assert.ok(error.message.length < 2048, `message is ${error.message.length} characters`);
  });

  test('custom bounds lower the item limit', () => {
    const bounds: TodoBounds = { ...DEFAULT_TODO_BOUNDS, maxItems: 3 };
    assert.equal(acceptTodoWrite({ todos: pendingList(3) }, SINGLE, bounds).length, 3);
    assertOneProblem(rejectWrite({ todos: pendingList(4) }, SINGLE, bounds), 'too-many-items', '4', 'limit of 3');
  });

  test('a content over the length limit is rejected as content-too-long naming the index, length and limit', () => {
    const error = rejectWrite({ todos: [todo('ok'), todo('x'.repeat(1001))] });
    assertOneProblem(error, 'content-too-long', 'todos[1].content', '1001', 'limit of 1000');
    assert.ok(error.message.length < 300, error.message);
  });

  test('custom bounds lower the content length limit', () => {
    const bounds: TodoBounds = { ...DEFAULT_TODO_BOUNDS, maxContentLength: 5 };
    assert.equal(acceptTodoWrite({ todos: [todo('12345')] }, SINGLE, bounds).length, 1);
    assertOneProblem(rejectWrite({ todos: [todo('123456')] }, SINGLE, bounds), 'content-too-long', '6', 'limit of 5');
  });

  test('a list over the byte limit is rejected as list-too-large with its size and the limit', () => {
    const todos = [todo('héllo wörld 中文 😀'), todo('second', 'completed')];
    const bytes = Buffer.byteLength(JSON.stringify(todos), 'utf8');
    const exact: TodoBounds = { ...DEFAULT_TODO_BOUNDS, maxListBytes: bytes };
    assert.deepStrictEqual(acceptTodoWrite({ todos }, SINGLE, exact), todos);
    const under: TodoBounds = { ...DEFAULT_TODO_BOUNDS, maxListBytes: bytes - 1 };
    assertOneProblem(rejectWrite({ todos }, SINGLE, under), 'list-too-large', `${bytes} bytes`, `limit of ${bytes - 1}`);
  });

  test('the default byte limit rejects 500 contents of 1000 CJK characters as list-too-large', () => {
    const todos = Array.from({ length: 500 }, (_, i) => todo(`${i}${'中'.repeat(1000 - String(i).length)}`));
    const error = rejectWrite({ todos });
    assertOneProblem(error, 'list-too-large', `limit of ${DEFAULT_TODO_BOUNDS.maxListBytes}`);
    assert.ok(error.message.includes(`${jsonUtf8Length(todos)} bytes`), error.message);
  });

  test('the default bounds keep the largest accepted list far below the 2 MB payload limit', () => {
    assert.ok(DEFAULT_TODO_BOUNDS.maxListBytes <= 2 * 1024 * 1024 / 4);
    assert.ok(Object.isFrozen(DEFAULT_TODO_BOUNDS));
  });
});

describe('acceptTodoWrite: several problems at once', () => {
  test('one rejection lists every broken value rule, the policy and the byte limit together', () => {
    const todos = [todo(' a', 'in_progress'), todo(''), todo('b', 'in_progress'), todo('b'), todo('c\uD800')];
    const bounds: TodoBounds = { ...DEFAULT_TODO_BOUNDS, maxListBytes: 10 };
    const error = rejectWrite({ todos }, SINGLE, bounds);
    assert.deepStrictEqual(
      error.problems.map((p) => [p.rule, p.path]),
      [
        ['untrimmed-content', 'todos[0].content'],
        ['empty-content', 'todos[1].content'],
        ['duplicate-content', 'todos[3].content'],
        ['malformed-unicode', 'todos[4].content'],
        ['parallel-in-progress', 'todos'],
        ['list-too-large', 'todos'],
      ],
    );
    assert.equal(error.rule, 'untrimmed-content');
    assert.ok(error.message.startsWith('todo_write rejected (6 problems): '), error.message);
    for (const rule of ['[untrimmed-content]', '[empty-content]', '[duplicate-content]', '[malformed-unicode]', '[parallel-in-progress]', '[list-too-large]']) {
      assert.ok(error.message.includes(rule), `${rule} not in: ${error.message}`);
    }
  });

  test('a rejection lists at most ten problems and summarises the rest', () => {
    const error = rejectWrite({ todos: Array.from({ length: 12 }, () => todo(' ')) });
    assert.equal(error.problems.length, 12);
    assert.ok(error.message.startsWith('todo_write rejected (12 problems): '), error.message);
    assert.ok(error.message.endsWith('…and 2 more problems'), error.message);
    assert.ok(error.message.includes('todos[9].content'), error.message);
    assert.ok(!error.message.includes('todos[10].content'), error.message);
    assert.equal(error.message.split('[empty-content]').length - 1, 10);
  });

  test('one problem beyond the ten listed is summarised in the singular', () => {
    const error = rejectWrite({ todos: Array.from({ length: 11 }, () => todo('')) });
    assert.ok(error.message.endsWith('…and 1 more problem'), error.message);
  });

  test('exactly ten problems are all listed with no summary', () => {
    const error = rejectWrite({ todos: Array.from({ length: 10 }, () => todo('')) });
    assert.equal(error.problems.length, 10);
    assert.ok(!error.message.includes('more problem'), error.message);
    assert.equal(error.message.split('[empty-content]').length - 1, 10);
  });

  test('thousands of problems under custom bounds still give a short message', () => {
    const bounds: TodoBounds = { maxItems: 200_000, maxContentLength: 1000, maxListBytes: 64 * 1024 * 1024 };
    const error = rejectWrite({ todos: Array.from({ length: 5_000 }, () => todo(' '.repeat(200))) }, SINGLE, bounds);
    assert.equal(error.problems.length, 5_000);
    assert.ok(error.message.endsWith('…and 4990 more problems'), error.message.slice(-80));
    assert.ok(error.message.length < 2048, `message is ${error.message.length} characters`);
  });

  test('long offending values are cut short in the message', () => {
    const error = rejectWrite({ todos: [todo(` ${'x'.repeat(900)} `)] });
    assert.equal(error.rule, 'untrimmed-content');
    assert.ok(error.message.length < 400, `message is ${error.message.length} characters`);
  });
});

describe('trimTodoWriteArgs', () => {
  test('trims every string content and leaves statuses alone', () => {
    assert.deepStrictEqual(trimTodoWriteArgs({ todos: [todo('  a '), todo('\tb\n', 'completed')] }), {
      todos: [todo('a'), todo('b', 'completed')],
    });
  });

  test('does not change the arguments it was given', () => {
    const args = { todos: [todo(' a ')] };
    trimTodoWriteArgs(args);
    assert.deepStrictEqual(args, { todos: [todo(' a ')] });
  });

  test('keeps extra properties and malformed entries so the acceptance checks still see them', () => {
    const args = { todos: [{ content: ' a ', status: 'pending', priority: 1 }, 5, null, { content: 3 }], extra: true };
    assert.deepStrictEqual(trimTodoWriteArgs(args), {
      todos: [{ content: 'a', status: 'pending', priority: 1 }, 5, null, { content: 3 }],
      extra: true,
    });
    assert.equal(rejectWrite(trimTodoWriteArgs(args)).rule, 'shape');
  });

  test('returns non-object arguments and a missing todos unchanged', () => {
    for (const args of [null, undefined, 'x', 3, [todo(' a ')], {}, { todos: 'x' }]) {
      assert.deepStrictEqual(trimTodoWriteArgs(args), args);
    }
  });
});
