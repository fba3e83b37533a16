import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  REJECTION_RULES,
  acceptTodoWrite,
  assertTodoInvariant,
  contentKey,
  TODO_STATUSES,
  Rejection,
  trimTodoWriteArgs,
  type TodoItem,
  type TodoList,
  type TodoPolicy,
} from '../../src/todo';
import { foldSession, INITIAL_SESSION_STATE, type SessionEvent, type SessionState } from '../../src/session';
import { PARALLEL, SINGLE } from './domain-fixtures';



// Characters chosen to stress trimming, escaping and uniqueness: whitespace of several kinds,
// NUL, bidi marks, combining marks, emoji sequences, quotes, and (separately) lone surrogates.
const TRICKY = [
  'a', 'b', 'A', ' ', '\t', '\n', '\r', '\u00A0', '\u2028', '\u3000', '\uFEFF', '\u0000', '\u200E', '\u200F', '\u202E',
  '\u0301', 'e\u0301', '\u00E9', '😀', '👨‍👩‍👧', '🇫🇷', '"', '\\', '中', '__proto__', 'constructor',
] as const;

const wellFormedUnit = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const anyUnit = fc.oneof({ weight: 12, arbitrary: wellFormedUnit }, { weight: 1, arbitrary: loneSurrogate });

const anyString = fc.string({ unit: anyUnit, maxLength: 8 });
const contentArb = fc.oneof(
  { weight: 4, arbitrary: anyString },
  { weight: 2, arbitrary: fc.constantFrom('a', 'b', ' a', 'a ', '', '   ', '\u00A0a') },
);
const statusArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...TODO_STATUSES) },
  { weight: 1, arbitrary: fc.constantFrom('done', 'PENDING', '', null, 1, true) },
);
const keyArb = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', 'priority', 'id', 'content', 'status', 'todos'),
  fc.string({ maxLength: 4 }),
);

/** Builds a plain object with own properties, even for keys such as `__proto__`. */
function ownObject(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return object;
}

/** `undefined` most of the time, a value about once in 16. */
function rarely<T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: 15, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}

const itemArb = fc
  .record({
    content: fc.option(contentArb, { freq: 40, nil: undefined }),
    status: fc.option(statusArb, { freq: 40, nil: undefined }),
    extra: rarely(fc.tuple(keyArb, fc.jsonValue({ maxDepth: 1 }))),
  })
  .map(({ content, status, extra }) => {
    const entries: Array<readonly [string, unknown]> = [];
    if (content !== undefined) entries.push(['content', content]);
    if (status !== undefined) entries.push(['status', status]);
    if (extra !== undefined) entries.push(extra);
    return ownObject(entries);
  });

const entryArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 25, arbitrary: itemArb },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
);

/** Arguments close to valid ones, so that every acceptance rule is reached, not only shape. */
const nearValidArgs: fc.Arbitrary<unknown> = fc
  .record({
    todos: fc.array(entryArb, { maxLength: 8 }),
    extra: rarely(fc.tuple(keyArb.filter((k) => k !== 'todos'), fc.jsonValue({ maxDepth: 1 }))),
  })
  .map(({ todos, extra }) => ownObject(extra === undefined ? [['todos', todos]] : [['todos', todos], extra]));

const jsonArgs: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ stringUnit: anyUnit, maxDepth: 4 }),
  fc.jsonValue({ stringUnit: anyUnit, maxDepth: 3 }).map((todos) => ({ todos })),
  fc.array(fc.jsonValue({ stringUnit: anyUnit, maxDepth: 2 }), { maxLength: 5 }).map((todos) => ({ todos })),
);

const anythingArgs: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({
    key: keyArb,
    stringUnit: anyUnit,
    maxDepth: 3,
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    withTypedArray: true,
  }),
  fc.array(fc.anything({ key: keyArb, maxDepth: 2, withNullPrototype: true, withSparseArray: true }), { maxLength: 4 }).map((todos) => ({ todos })),
);

/** JSON-safe arguments (no prototypes, no holes), for checks that copy the input. */
const jsonSafeArgs = fc.oneof({ weight: 3, arbitrary: nearValidArgs }, { weight: 1, arbitrary: jsonArgs });
const allArgs = fc.oneof({ weight: 3, arbitrary: nearValidArgs }, { weight: 1, arbitrary: jsonArgs }, { weight: 1, arbitrary: anythingArgs });

type Outcome = { accepted: TodoItem[] } | { rejected: Rejection };

function attempt(args: unknown, policy: TodoPolicy): Outcome {
  try {
    return { accepted: acceptTodoWrite(args, policy) };
  } catch (error) {
    if (error instanceof Rejection) return { rejected: error };
    throw error;
  }
}

/** The accepted list holds exactly the input's todos: same length, same own content and status. */
function assertSameTodos(accepted: readonly TodoItem[], args: unknown): void {
  const todos = (args as { todos?: unknown }).todos;
  assert.ok(Array.isArray(todos));
  assert.equal(accepted.length, todos.length);
  accepted.forEach((item, index) => {
    const source = todos[index] as Record<string, unknown>;
    assert.deepStrictEqual(Object.keys(source).sort(), ['content', 'status']);
    assert.deepStrictEqual(Object.keys(item).sort(), ['content', 'status']);
    assert.equal(Object.getPrototypeOf(item), Object.prototype);
    assert.equal(item.content, source['content']);
    assert.equal(item.status, source['status']);
  });
}

// Well-formed, trimmed, unique lists: what the invariant describes and acceptance under `true` takes.
const trimmedContent = fc
  .string({ unit: wellFormedUnit, minLength: 1, maxLength: 10 })
  .map((text) => text.trim())
  .filter((text) => text.length > 0);
// Unique by the near-duplicate key, so no two contents differ only in case, spacing or form.
const validList: fc.Arbitrary<TodoItem[]> = fc.uniqueArray(
  fc.record({ content: trimmedContent, status: fc.constantFrom(...TODO_STATUSES) }, { noNullPrototype: true }),
  { selector: (item) => contentKey(item.content), maxLength: 8 },
);

describe('acceptance properties', () => {
  test('every list acceptTodoWrite accepts satisfies the durable invariant', () => {
    fc.assert(
      fc.property(allArgs, fc.boolean(), (args, allowParallelInProgress) => {
        const outcome = attempt(args, { allowParallelInProgress });
        if ('accepted' in outcome) assertTodoInvariant(outcome.accepted, 'accepted write');
      }),
      { numRuns: 1000 },
    );
  });

  test('arbitrary input is either accepted as sent or rejected with a Rejection naming a known rule', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(allArgs, fc.boolean(), (args, allowParallelInProgress) => {
        let outcome: Outcome;
        try {
          outcome = attempt(args, { allowParallelInProgress });
        } catch (error) {
          assert.fail(`a non-Rejection error escaped: ${String(error)}`);
        }
        if ('accepted' in outcome) {
          seen.add('accepted');
          assertSameTodos(outcome.accepted, args);
          return;
        }
        const { rejected } = outcome;
        assert.equal(rejected.name, 'Rejection');
        assert.ok(rejected.message.startsWith('todo_write rejected'), rejected.message);
        assert.ok((REJECTION_RULES as readonly string[]).includes(rejected.rule), rejected.rule);
        assert.ok(rejected.problems.length > 0);
        assert.equal(rejected.problems[0]?.rule, rejected.rule);
        for (const problem of rejected.problems) {
          assert.ok((REJECTION_RULES as readonly string[]).includes(problem.rule), problem.rule);
          seen.add(problem.rule);
        }
        assert.ok(rejected.message.length < 4096, `message is ${rejected.message.length} characters`);
      }),
      { numRuns: 1000 },
    );
    // The generators must reach every rule they can; otherwise the property proves little.
    for (const expected of ['accepted', 'shape', 'empty-content', 'untrimmed-content', 'duplicate-content', 'malformed-unicode', 'parallel-in-progress']) {
      assert.ok(seen.has(expected), `never saw ${expected}; saw ${[...seen].join(', ')}`);
    }
  });

  test('acceptance under false implies acceptance under true: the policy only narrows', () => {
    fc.assert(
      fc.property(allArgs, (args) => {
        const single = attempt(args, SINGLE);
        const parallel = attempt(args, PARALLEL);
        if ('accepted' in single) {
          assert.ok('accepted' in parallel, 'accepted under false but rejected under true');
          assert.deepStrictEqual(parallel.accepted, single.accepted);
        }
        const singleProblems = 'rejected' in single ? single.rejected.problems.filter((p) => p.rule !== 'parallel-in-progress') : [];
        const parallelProblems = 'rejected' in parallel ? parallel.rejected.problems : [];
        assert.ok(parallelProblems.every((p) => p.rule !== 'parallel-in-progress'));
        assert.deepStrictEqual(singleProblems, [...parallelProblems]);
      }),
      { numRuns: 1000 },
    );
  });

  test('after the tool layer trims, a write is never rejected as untrimmed-content and is stored as trimmed', () => {
    fc.assert(
      fc.property(allArgs, fc.boolean(), (args, allowParallelInProgress) => {
        const trimmed = trimTodoWriteArgs(args);
        const outcome = attempt(trimmed, { allowParallelInProgress });
        if ('rejected' in outcome) {
          assert.ok(outcome.rejected.problems.every((p) => p.rule !== 'untrimmed-content'), outcome.rejected.message);
        } else {
          assert.deepStrictEqual(outcome.accepted, (trimmed as { todos: TodoItem[] }).todos);
          assertSameTodos(outcome.accepted, trimmed);
        }
      }),
      { numRuns: 1000 },
    );
  });

  test('trimming is idempotent and never changes the arguments it is given', () => {
    fc.assert(
      fc.property(jsonSafeArgs, (args) => {
        const before = JSON.stringify(args);
        const once = trimTodoWriteArgs(args);
        assert.equal(JSON.stringify(args), before);
        assert.deepStrictEqual(trimTodoWriteArgs(once), once);
      }),
      { numRuns: 500 },
    );
  });

  test('a write that is accepted untrimmed is unchanged by trimming', () => {
    fc.assert(
      fc.property(jsonSafeArgs, (args) => {
        const outcome = attempt(args, PARALLEL);
        if ('accepted' in outcome) assert.deepStrictEqual(attempt(trimTodoWriteArgs(args), PARALLEL), outcome);
      }),
      { numRuns: 500 },
    );
  });

  test('a rejected write leaves its arguments unchanged', () => {
    fc.assert(
      fc.property(jsonSafeArgs, fc.boolean(), (args, allowParallelInProgress) => {
        const before = JSON.stringify(args);
        attempt(args, { allowParallelInProgress });
        assert.equal(JSON.stringify(args), before);
      }),
      { numRuns: 300 },
    );
  });

  test('every well-formed, trimmed, unique list is accepted under true, and under false exactly when at most one is in_progress', () => {
    fc.assert(
      fc.property(validList, (todos) => {
        assert.deepStrictEqual(acceptTodoWrite({ todos }, PARALLEL), todos);
        const active = todos.filter((t) => t.status === 'in_progress').length;
        const single = attempt({ todos }, SINGLE);
        if (active <= 1) assert.ok('accepted' in single);
        else {
          assert.ok('rejected' in single);
          assert.equal(single.rejected.rule, 'parallel-in-progress');
          assert.ok(single.rejected.message.includes(`got ${active}`), single.rejected.message);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('near-duplicate properties', () => {
  test('two different contents with the same key are refused at acceptance and still pass the durable invariant', () => {
    const variants = (content: string) => [content.toUpperCase(), content.toLowerCase(), content.replace(/ /g, '  '), content.normalize('NFD'), content.normalize('NFKD')];
    fc.assert(
      fc.property(validList.filter((todos) => todos.length > 0), fc.nat(), fc.nat(), (todos, which, variant) => {
        const original = todos[which % todos.length]!;
        const twin = variants(original.content).filter((text) => text !== original.content && text.trim() === text && text !== '')[variant % 5];
        fc.pre(twin !== undefined && contentKey(twin) === contentKey(original.content));
        const list = [...todos, { content: twin!, status: original.status }];
        const outcome = attempt({ todos: list }, PARALLEL);
        assert.ok('rejected' in outcome, `${JSON.stringify(list)} was accepted`);
        assert.ok(outcome.rejected.problems.some((p) => p.rule === 'near-duplicate-content' && p.path === `todos[${todos.length}].content`));
        assert.doesNotThrow(() => assertTodoInvariant(list, 'written before the rule'));
      }),
      { numRuns: 500 },
    );
  });
});

describe('invariant properties', () => {
  test('the invariant is silent on how many todos are in_progress', () => {
    fc.assert(
      fc.property(validList, fc.array(fc.boolean(), { maxLength: 8 }), (todos, active) => {
        const marked = todos.map((todo, i) => (active[i] === true ? { ...todo, status: 'in_progress' as const } : todo));
        assert.doesNotThrow(() => assertTodoInvariant(marked, 'property'));
        assert.deepStrictEqual(foldSession([{ type: 'todo/write', todos: marked }]).todos, marked);
      }),
      { numRuns: 500 },
    );
  });

  test('k in_progress todos pass the invariant for any k', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), (k) => {
        const todos = Array.from({ length: k }, (_, i) => ({ content: `task ${i}`, status: 'in_progress' }));
        assert.doesNotThrow(() => assertTodoInvariant(todos, 'property'));
      }),
      { numRuns: 100 },
    );
  });
});

const labelArb = fc.option(fc.string({ maxLength: 12 }), { nil: undefined });
const eventArb: fc.Arbitrary<SessionEvent> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(validList, labelArb)
      .map(([todos, label]): SessionEvent => (label === undefined ? { type: 'todo/write', todos } : { type: 'todo/write', todos, label })),
  },
  { weight: 2, arbitrary: fc.constant<SessionEvent>({ type: 'turn/start' }) },
  { weight: 2, arbitrary: fc.constant<SessionEvent>({ type: 'turn/end' }) },
  { weight: 1, arbitrary: fc.constant<SessionEvent>({ type: 'session/close' }) },
);
const eventsArb = fc.array(eventArb, { maxLength: 20 });

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** An independent model of the fold, written from DESIGN §6 rather than from the code. */
function model(all: readonly SessionEvent[]): SessionState {
  const events = applied(all);
  let todos: TodoList = null;
  let turnOpen = false;
  for (const event of events) {
    if (event.type === 'todo/write') todos = event.todos as TodoItem[];
    if (event.type === 'turn/start') {
      todos = null;
      turnOpen = true;
    }
    if (event.type === 'turn/end' || event.type === 'session/close') turnOpen = false;
  }
  return {
    ...INITIAL_SESSION_STATE,
    turn: events.filter((e) => e.type === 'turn/start').length,
    turnOpen,
    todos,
    version: applied(events).length,
    closed: events.some((e) => e.type === 'session/close'),
    // Turns sent after the close are not applied; they are listed as ignored signals.
    ignoredSignals: all.slice(events.length).filter((e) => e.type === 'turn/start' || e.type === 'turn/end').slice(-20).map((e) => ({ name: e.type, at: null, reason: '' })),
  };
}

/** The fold's state with each ignored signal's reason left out (the model does not word them). */
function withoutReasons(state: SessionState): SessionState {
  return { ...state, ignoredSignals: state.ignoredSignals.map((signal) => ({ ...signal, reason: '' })) };
}

/** The events that count: a closed session takes nothing more (these events hold no child reports). */
function applied(events: readonly SessionEvent[]): SessionEvent[] {
  const first = events.findIndex((e) => e.type === 'session/close');
  return first === -1 ? [...events] : events.slice(0, first + 1);
}

describe('fold properties', () => {
  test('folding the same events twice gives deep-equal results and leaves the events unchanged', () => {
    fc.assert(
      fc.property(eventsArb, (events) => {
        const copy = structuredClone(events);
        deepFreeze(events);
        const first = foldSession(events);
        const second = foldSession(events);
        assert.deepStrictEqual(first, second);
        assert.deepStrictEqual(events, copy);
        assert.deepStrictEqual(foldSession(copy), first);
      }),
      { numRuns: 500 },
    );
  });

  test('folding a ++ b equals folding b from the state after a', () => {
    fc.assert(
      fc.property(eventsArb, eventsArb, (a, b) => {
        assert.deepStrictEqual(foldSession([...a, ...b]), foldSession(b, foldSession(a)));
      }),
      { numRuns: 500 },
    );
  });

  test('the version equals the number of events applied', () => {
    fc.assert(
      fc.property(eventsArb, fc.nat({ max: 10_000 }), (events, start) => {
        // Once closed, a session takes no more of these events: they change nothing, version included.
        assert.equal(foldSession(events).version, applied(events).length);
        assert.equal(foldSession(events, { ...INITIAL_SESSION_STATE, version: start }).version, start + applied(events).length);
      }),
      { numRuns: 500 },
    );
  });

  test('the fold agrees with an independent model of the projection', () => {
    fc.assert(
      fc.property(eventsArb, (events) => {
        assert.deepStrictEqual(withoutReasons(foldSession(events)), model(events));
      }),
      { numRuns: 500 },
    );
  });

  test('the initial state is never changed by folding', () => {
    fc.assert(
      fc.property(eventsArb, (events) => {
        foldSession(events);
        assert.deepStrictEqual({ ...INITIAL_SESSION_STATE }, { turn: 0, turnOpen: false, todos: null, version: 0, closed: false, children: [], updatedAt: null, recentWrites: [], ignoredSignals: [] });
      }),
      { numRuns: 100 },
    );
  });
});
