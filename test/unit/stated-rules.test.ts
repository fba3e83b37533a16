import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { SessionClient } from '../../src/client';
import { createHttpApp } from '../../src/http/app';
import {
  acceptSubagentSpawn,
  acceptUserMessage,
  INITIAL_SESSION_STATE,
  MAX_TASK_LENGTH,
  MAX_USER_MESSAGE_CHARS,
  NEW_SESSION_ID_PATTERN,
  newSessionIdProblem,
  SEARCHABLE_PATTERN,
  SUBAGENT_NAME_PATTERN,
  UNSEARCHABLE_CHARACTER,
} from '../../src/session';
import { acceptTodoWrite, isBlank, NOT_BLANK_PATTERN, Rejection, todoWriteToolDefinition, type RejectionRule } from '../../src/todo';

/** The rule a check refused `run` under, or `undefined` when it accepted. */
function refusedUnder(run: () => unknown): RejectionRule | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof Rejection) return error.rule;
    throw error;
  }
}

/** Strings built mostly of the characters the rules are about. */
const tricky = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '.', '_', '-', '/', ' ', '\t', '\n', '\u00a0', '\u3000', '\ufeff', '\u0000', '\u001c', 'é'), maxLength: 8 });

describe('each rule is stated once, and the check and the documents read it there', () => {
  test('"not blank" is exactly what trimming says, for every code point', () => {
    for (let point = 0; point <= 0x10ffff; point++) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      const text = String.fromCodePoint(point);
      assert.equal(isBlank(text), text.trim() === '', `U+${point.toString(16).padStart(4, '0')}`);
    }
    fc.assert(fc.property(tricky, (text) => isBlank(text) === (text.trim() === '')));
  });

  test('a subagent name is accepted exactly when it matches the stated pattern', () => {
    const pattern = new RegExp(SUBAGENT_NAME_PATTERN);
    fc.assert(
      fc.property(fc.oneof(tricky, fc.string({ maxLength: 70 }), fc.stringMatching(pattern)), (name) => {
        const rule = refusedUnder(() => acceptSubagentSpawn({ name }, INITIAL_SESSION_STATE));
        assert.equal(rule === undefined, pattern.test(name), `${JSON.stringify(name)}: ${rule}`);
      }),
    );
  });

  test("a new session's id is accepted exactly when it matches the stated pattern", () => {
    const pattern = new RegExp(NEW_SESSION_ID_PATTERN);
    fc.assert(fc.property(fc.oneof(tricky, fc.string()), (id) => assert.equal(newSessionIdProblem(id) === undefined, pattern.test(id), JSON.stringify(id))));
    assert.match(newSessionIdProblem(`a${UNSEARCHABLE_CHARACTER}b`) ?? '', /U\+0000/);
    assert.equal(new RegExp(SEARCHABLE_PATTERN).test(`a${UNSEARCHABLE_CHARACTER}b`), false);
  });

  test('a message and a todo are refused as blank exactly when the stated pattern does not match', () => {
    const pattern = new RegExp(NOT_BLANK_PATTERN);
    fc.assert(
      fc.property(tricky.filter((text) => text !== ''), (text) => {
        assert.equal(refusedUnder(() => acceptUserMessage({ text }, false)) === 'empty-message', !pattern.test(text));
        const todos = [{ content: text.trim() === '' ? text : text.trim(), status: 'pending' }];
        assert.equal(refusedUnder(() => acceptTodoWrite({ todos }, { allowParallelInProgress: true })) === 'empty-content', !pattern.test(text));
      }),
    );
  });

  test("the tool definition states a todo's rule with the same constant", () => {
    const tool = todoWriteToolDefinition({ allowParallelInProgress: false }).function.parameters as { properties: { todos: { items: { properties: { content: { pattern: string } } } } } };
    assert.equal(tool.properties.todos.items.properties.content.pattern, NOT_BLANK_PATTERN);
  });

  test('the HTTP document states those rules with the same constants', async () => {
    const { app } = createHttpApp({ client: SessionClient.lazy({ address: '127.0.0.1:1', taskQueue: 'unused' }), allowedHosts: ['127.0.0.1'] });
    const document = (await (await app.request('http://127.0.0.1/openapi.json', { headers: { Host: '127.0.0.1' } })).json()) as any;
    const schemas = document.components.schemas;
    assert.equal(schemas.UserMessage.properties.text.pattern, NOT_BLANK_PATTERN);
    assert.equal(schemas.UserMessage.properties.text.maxLength, MAX_USER_MESSAGE_CHARS);
    assert.equal(schemas.SpawnSubagent.properties.name.pattern, SUBAGENT_NAME_PATTERN);
    assert.equal(schemas.SpawnSubagent.properties.task.maxLength, MAX_TASK_LENGTH);
    assert.equal(schemas.StartSession.properties.id.pattern, NEW_SESSION_ID_PATTERN);
    assert.equal(schemas.ForkRequest.properties.newId.pattern, NEW_SESSION_ID_PATTERN);
    assert.deepEqual(schemas.ForkRequest.not, { required: ['at', 'beforeTurn'] });
    assert.equal(schemas.TodoWriteArgs.properties.todos.items.properties.content.pattern, NOT_BLANK_PATTERN);
    const parameter = (path: string, method: string, name: string) => document.paths[path][method].parameters.find((p: { name: string }) => p.name === name).schema;
    assert.equal(parameter('/sessions/{id}', 'get', 'id').pattern, NOT_BLANK_PATTERN);
    assert.equal(parameter('/sessions', 'get', 'parent').pattern, SEARCHABLE_PATTERN);
    assert.match('W/"3"', new RegExp(parameter('/sessions/{id}/todo_write', 'post', 'If-Match').pattern));
  });
});
