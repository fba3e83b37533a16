import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sdk from '@temporalio/workflow';
import * as messages from '../../workflows/messages';

test("every message definition of the wire contract is what the SDK's defineUpdate, defineSignal or defineQuery makes of its name", () => {
  type Definition = { type: 'update' | 'signal' | 'query'; name: string };
  const definitions = Object.entries(messages as Record<string, unknown>).filter(
    (entry): entry is [string, Definition] => typeof entry[1] === 'object' && entry[1] !== null && 'type' in entry[1] && 'name' in entry[1],
  );
  assert.ok(definitions.length >= 15, `found ${definitions.length} definitions`);
  const made: Record<Definition['type'], (name: string) => unknown> = { update: sdk.defineUpdate, signal: sdk.defineSignal, query: sdk.defineQuery };
  for (const [exported, definition] of definitions) {
    assert.deepEqual(definition, made[definition.type](definition.name), exported);
  }
});

test('naming the messages does not evaluate the SDK workflow package (a short command does not pay for it)', async () => {
  const { execFileSync } = await import('node:child_process');
  const loaded = execFileSync(
    process.execPath,
    [...process.execArgv, '-e', "require('./workflows/messages'); console.log(Object.keys(require.cache).some((file) => /@temporalio[\\\\/]workflow[\\\\/]/.test(file)))"],
    { cwd: `${__dirname}/../..`, encoding: 'utf8' },
  );
  assert.equal(loaded.trim(), 'false');
});
