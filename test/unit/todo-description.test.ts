import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_TODO_BOUNDS,
  describeTodoWrite,
  TODO_STATUSES,
  TODO_WRITE_TOOL_NAME,
  todoWriteToolDefinition,
  type TodoBounds,
} from '../../src/todo';

const parallel = describeTodoWrite({ allowParallelInProgress: true });
const single = describeTodoWrite({ allowParallelInProgress: false });

function commonPrefixLength(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function commonSuffixLength(a: string, b: string, limit: number): number {
  let i = 0;
  while (i < a.length - limit && i < b.length - limit && a[a.length - 1 - i] === b[b.length - 1 - i]) i++;
  return i;
}

function split(a: string, b: string): { head: string; tail: string; middleA: string; middleB: string } {
  const p = commonPrefixLength(a, b);
  const s = commonSuffixLength(a, b, p);
  return { head: a.slice(0, p), tail: a.slice(a.length - s), middleA: a.slice(p, a.length - s), middleB: b.slice(p, b.length - s) };
}

function asRecord(value: unknown): Record<string, unknown> {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `not an object: ${JSON.stringify(value)}`);
  return value as Record<string, unknown>;
}

function findKey(value: unknown, key: string): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Object.prototype.hasOwnProperty.call(value, key)) return true;
  return Object.values(value).some((child) => findKey(child, key));
}

describe('describeTodoWrite', () => {
  test('the two policies give different texts', () => {
    assert.notEqual(parallel, single);
  });

  test('the texts differ only in the active-status clause', () => {
    const { head, tail, middleA, middleB } = split(parallel, single);
    assert.equal(head + middleA + tail, parallel);
    assert.equal(head + middleB + tail, single);
    assert.ok(middleA.length > 0 && middleB.length > 0);
    assert.ok(middleA.length < 200 && middleB.length < 200, `${middleA.length} / ${middleB.length}`);
    assert.ok(/several|every/i.test(middleA), middleA);
    assert.ok(/at most one/i.test(middleB), middleB);
    assert.ok(!/at most one/i.test(head + tail));
  });

  test('the shared text says the ENTIRE list is sent and REPLACES the previous one', () => {
    const { head, tail } = split(parallel, single);
    const shared = head + tail;
    for (const text of [parallel, single, shared]) {
      assert.ok(text.includes('ENTIRE'), text);
      assert.ok(text.includes('REPLACES'), text);
    }
  });

  test('the shared text rules out partial updates and skips trivial tasks', () => {
    const { head, tail } = split(parallel, single);
    const shared = head + tail;
    assert.match(shared, /no partial updates/i);
    assert.match(shared, /trivial/i);
    assert.match(shared, /one todo per/i);
  });

  test('the parallel text allows several in_progress and the single text allows one', () => {
    assert.match(parallel, /several may be in_progress/);
    assert.match(single, /at most one todo in_progress/);
    assert.doesNotMatch(parallel, /at most one/);
  });

  test('the description is deterministic', () => {
    assert.equal(describeTodoWrite({ allowParallelInProgress: true }), parallel);
    assert.equal(describeTodoWrite({ allowParallelInProgress: false }), single);
  });
});

describe('todoWriteToolDefinition', () => {
  const definition = todoWriteToolDefinition({ allowParallelInProgress: false });
  const parameters = definition.function.parameters;
  const todos = asRecord(asRecord(parameters['properties'])['todos']);
  const item = asRecord(todos['items']);
  const itemProperties = asRecord(item['properties']);

  test('is an OpenAI-style function named todo_write', () => {
    assert.equal(definition.type, 'function');
    assert.equal(definition.function.name, 'todo_write');
    assert.equal(TODO_WRITE_TOOL_NAME, 'todo_write');
  });

  test('carries the description for its policy', () => {
    assert.equal(definition.function.description, single);
    assert.equal(todoWriteToolDefinition({ allowParallelInProgress: true }).function.description, parallel);
  });

  test('the parameters forbid extra properties at the top and item level', () => {
    assert.equal(parameters['type'], 'object');
    assert.equal(parameters['additionalProperties'], false);
    assert.equal(item['type'], 'object');
    assert.equal(item['additionalProperties'], false);
  });

  test('the parameters require todos, and content and status on every item', () => {
    assert.deepStrictEqual(parameters['required'], ['todos']);
    assert.deepStrictEqual(item['required'], ['content', 'status']);
    assert.deepStrictEqual(Object.keys(asRecord(parameters['properties'])), ['todos']);
    assert.deepStrictEqual(Object.keys(itemProperties).sort(), ['content', 'status']);
  });

  test('todos is an array and content is a string', () => {
    assert.equal(todos['type'], 'array');
    assert.equal(asRecord(itemProperties['content'])['type'], 'string');
  });

  test('the status enum is exactly the three statuses', () => {
    const status = asRecord(itemProperties['status']);
    assert.deepStrictEqual(status['enum'], ['pending', 'in_progress', 'completed']);
    assert.deepStrictEqual(status['enum'], [...TODO_STATUSES]);
  });

  test('maxItems and maxLength equal the default bounds', () => {
    assert.equal(todos['maxItems'], DEFAULT_TODO_BOUNDS.maxItems);
    assert.equal(asRecord(itemProperties['content'])['maxLength'], DEFAULT_TODO_BOUNDS.maxContentLength);
  });

  test('maxItems and maxLength follow custom bounds', () => {
    const bounds: TodoBounds = { maxItems: 7, maxContentLength: 33, maxListBytes: 1000 };
    const custom = todoWriteToolDefinition({ allowParallelInProgress: true }, bounds).function.parameters;
    const customTodos = asRecord(asRecord(custom['properties'])['todos']);
    const customItem = asRecord(customTodos['items']);
    assert.equal(customTodos['maxItems'], 7);
    assert.equal(asRecord(asRecord(customItem['properties'])['content'])['maxLength'], 33);
  });

  test('there is no $schema key anywhere in the parameters', () => {
    assert.equal(Object.prototype.hasOwnProperty.call(parameters, '$schema'), false);
    assert.equal(findKey(parameters, '$schema'), false);
  });

  test('the definition survives a JSON round trip unchanged', () => {
    const text = JSON.stringify(definition);
    assert.equal(typeof text, 'string');
    assert.deepStrictEqual(JSON.parse(text), definition);
  });

  test('the description of the todos array tells the model the list is complete', () => {
    assert.match(String(todos['description']), /COMPLETE/);
  });
});
