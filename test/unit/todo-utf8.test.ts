import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonUtf8Length } from '../../src/todo';

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

const unit = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a', ' ', '"', '\\', '\n', '\u0000', '\u001F', '\u007F', '\u0080', '\u07FF', '\u0800', '\u200F', '\u2028', '\uFFFF', '中', 'e\u0301', '😀', '👨‍👩‍👧') },
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)) },
);

describe('jsonUtf8Length', () => {
  test('counts one, two, three and four byte characters', () => {
    assert.equal(jsonUtf8Length('a'), 3);
    assert.equal(jsonUtf8Length('é'), 4);
    assert.equal(jsonUtf8Length('中'), 5);
    assert.equal(jsonUtf8Length('😀'), 6);
  });

  test('counts the escapes JSON writes for quotes, backslashes and control characters', () => {
    assert.equal(jsonUtf8Length('"'), 4);
    assert.equal(jsonUtf8Length('\\'), 4);
    assert.equal(jsonUtf8Length('\u0001'), 8);
  });

  test('counts a lone surrogate as the six-character escape JSON writes for it', () => {
    assert.equal(jsonUtf8Length('\uD800'), 8);
    assert.equal(jsonUtf8Length('\uDFFF'), 8);
    assert.equal(jsonUtf8Length('\uDE00\uD83D'), 14);
  });

  test('counts an undefined value as nothing', () => {
    assert.equal(jsonUtf8Length(undefined), 0);
  });

  test('equals the byte length of JSON.stringify for a todo list', () => {
    const todos = [{ content: 'Plan 中文 😀 \u200F', status: 'pending' }];
    assert.equal(jsonUtf8Length(todos), bytes(todos));
  });

  test('equals Buffer.byteLength(JSON.stringify(x)) for arbitrary strings, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 40 }), (text) => {
        assert.equal(jsonUtf8Length(text), bytes(text));
      }),
      { numRuns: 1000 },
    );
  });

  test('equals Buffer.byteLength(JSON.stringify(x)) for arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: unit, maxDepth: 4 }), (value) => {
        assert.equal(jsonUtf8Length(value), bytes(value));
      }),
      { numRuns: 1000 },
    );
  });
});
