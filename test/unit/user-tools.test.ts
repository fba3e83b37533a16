import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { ToolRegistry } from '../../activities/tool-registry';
import { prepareUserTools, type UserTool } from '../../activities/user-tools';

const context = { sessionId: 's-1', callId: 'call-1', signal: new AbortController().signal, heartbeat: () => undefined };
const wordCount: UserTool = { name: 'word_count', description: 'Count words.', parameters: z.object({ text: z.string() }), run: ({ text }: { text: string }) => String(text.split(' ').length) };

function refusal(exported: unknown): string {
  try {
    prepareUserTools(exported, './tools.mjs');
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail('the tools were accepted');
}

describe("the user's own tools", () => {
  test('a zod schema is shown to the model as JSON Schema; a JSON Schema is shown as given and checked through zod', async () => {
    const [zodTool, jsonTool] = prepareUserTools(
      [wordCount, { name: 'reverse', description: 'Reverse.', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false }, run: ({ text }: { text: string }) => ({ reversed: [...text].reverse().join('') }) }],
      './tools.mjs',
    );
    assert.deepEqual(zodTool!.parameters.properties, { text: { type: 'string' } });
    assert.deepEqual(jsonTool!.parameters, { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false });
    assert.equal(jsonTool!.schema.safeParse({ text: 1 }).success, false);
    assert.equal(jsonTool!.schema.safeParse({ text: 'a', extra: 1 }).success, false);
    assert.deepEqual(await jsonTool!.run({ text: 'abc' }, context), { ok: true, content: '{"reversed":"cba"}' });
    assert.deepEqual(await zodTool!.run({ text: 'a b c' }, context), { ok: true, content: '3' });
  });

  test('a throw is a failed call the model reads, saying what failed', async () => {
    const [tool] = prepareUserTools([{ name: 'explode', description: 'Fails.', parameters: z.object({}), run: () => { throw new Error('the fuse was lit'); } }], './tools.mjs');
    assert.deepEqual(await tool!.run({}, context), { ok: false, content: 'explode failed: the fuse was lit' });
  });

  test('a malformed module is one sentence naming the module, the tool and what is wrong', () => {
    assert.match(refusal({ default: [] }), /^the tools module \.\/tools\.mjs: its default export must be a list of tools/);
    assert.match(refusal([{ ...wordCount, name: 'word count' }]), /tool 1 \("word count"\): name must be 1-64 letters, digits, _ or -/);
    assert.match(refusal([{ ...wordCount, name: 'mcp__fs__read' }]), /names starting with mcp__ belong to MCP servers' tools/);
    assert.match(refusal([wordCount, wordCount]), /tool 2 \("word_count"\): the name "word_count" is used twice/);
    assert.match(refusal([{ ...wordCount, description: '' }]), /description must be a non-empty string/);
    assert.match(refusal([{ ...wordCount, run: 'no' }]), /run must be a function/);
    assert.match(refusal([{ ...wordCount, parameters: z.string() }]), /parameters must describe an object/);
    assert.match(refusal([{ ...wordCount, parameters: { type: 'array' } }]), /parameters must be an object schema/);
  });

  test('a name a built-in tool has stops the worker, naming both', () => {
    const tools = prepareUserTools([{ ...wordCount, name: 'todo_write' }], './tools.mjs');
    assert.throws(
      () => new ToolRegistry({ policy: { allowParallelInProgress: true }, userTools: tools, userToolsSource: './tools.mjs' }),
      /the tool "todo_write" of \.\/tools\.mjs has the name of the built-in tool todo_write: rename it/,
    );
  });
});
