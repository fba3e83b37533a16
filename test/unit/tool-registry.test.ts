import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { toolDefinition, ToolRegistry } from '../../activities/tool-registry';
import { todoWriteToolDefinition } from '../../src/todo';

const context = { sessionId: 'registry-test', callId: 'call_1' };
let workspace: string;

before(() => {
  workspace = mkdtempSync(join(tmpdir(), 'agent-sessions-registry-'));
  writeFileSync(join(workspace, 'notes.txt'), 'hello');
});

after(() => rmSync(workspace, { recursive: true, force: true }));

describe('the tool registry', () => {
  test('offers todo_write and spawn_subagent, run by the session, and no file tools without a workspace', () => {
    const registry = new ToolRegistry({ policy: { allowParallelInProgress: false } });
    assert.deepEqual(registry.places(), { todo_write: 'session', spawn_subagent: 'session' });
    assert.deepEqual(registry.definitions().map((d) => d.function.name), ['todo_write', 'spawn_subagent']);
  });

  test('offers read_file and list_files, run by the worker, with a workspace', () => {
    const registry = new ToolRegistry({ policy: { allowParallelInProgress: true }, workspace });
    assert.deepEqual(registry.places(), { todo_write: 'session', spawn_subagent: 'session', read_file: 'worker', list_files: 'worker' });
  });

  test("todo_write's definition is the one src/todo makes for the policy, so its clause follows the policy", () => {
    for (const allowParallelInProgress of [true, false]) {
      const registry = new ToolRegistry({ policy: { allowParallelInProgress } });
      assert.deepEqual(registry.definitions()[0], todoWriteToolDefinition({ allowParallelInProgress }));
    }
    const [serial, parallel] = [false, true].map((allowParallelInProgress) => new ToolRegistry({ policy: { allowParallelInProgress } }).definitions()[0]!.function.description);
    assert.notEqual(serial, parallel);
  });

  test('every definition is a closed JSON Schema object generated from the zod schema, without $schema', () => {
    const registry = new ToolRegistry({ policy: { allowParallelInProgress: true }, workspace });
    for (const definition of registry.definitions()) {
      const parameters = definition.function.parameters;
      assert.equal(definition.type, 'function');
      assert.equal(parameters.type, 'object', definition.function.name);
      assert.equal(parameters.additionalProperties, false, definition.function.name);
      assert.equal('$schema' in parameters, false, definition.function.name);
      assert.ok(definition.function.description.length > 40, definition.function.name);
      assert.deepEqual(definition, toolDefinition(registry.get(definition.function.name)!));
    }
    const spawn = registry.get('spawn_subagent')!;
    assert.deepEqual(toolDefinition(spawn).function.parameters.required, ['name', 'task']);
    assert.deepEqual(toolDefinition(registry.get('list_files')!).function.parameters.required, undefined);
  });

  test('runs a worker tool with arguments parsed by its schema', async () => {
    const registry = new ToolRegistry({ policy: { allowParallelInProgress: true }, workspace });
    assert.deepEqual(await registry.run('read_file', '{"path":"notes.txt"}', context), { ok: true, content: 'hello' });
    assert.deepEqual(await registry.run('list_files', '{}', context), { ok: true, content: 'notes.txt' });
    assert.deepEqual(await registry.run('list_files', '', context), { ok: true, content: 'notes.txt' });
  });

  test('answers bad arguments with a result naming the problem, never an error', async () => {
    const registry = new ToolRegistry({ policy: { allowParallelInProgress: true }, workspace });
    const notJson = await registry.run('read_file', '{"path":', context);
    assert.equal(notJson.ok, false);
    assert.match(notJson.content, /^read_file: the arguments are not valid JSON/);
    const wrongType = await registry.run('read_file', '{"path":42}', context);
    assert.match(wrongType.content, /^read_file: invalid arguments: path: .*string/);
    const extra = await registry.run('read_file', '{"path":"notes.txt","mode":"w"}', context);
    assert.match(extra.content, /invalid arguments: .*mode/);
    const missing = await registry.run('read_file', '{}', context);
    assert.match(missing.content, /invalid arguments: path/);
  });

  test('refuses to run a session tool or a tool it does not have, saying which tools it runs', async () => {
    const registry = new ToolRegistry({ policy: { allowParallelInProgress: true }, workspace });
    assert.match((await registry.run('todo_write', '{"todos":[]}', context)).content, /no such tool; its tools are read_file, list_files/);
    assert.match((await registry.run('rm_rf', '{}', context)).content, /^rm_rf: this worker runs no such tool/);
    const without = new ToolRegistry({ policy: { allowParallelInProgress: true } });
    assert.deepEqual(await without.run('read_file', '{"path":"notes.txt"}', context), { ok: false, content: 'read_file: this worker runs no such tool' });
  });
});
