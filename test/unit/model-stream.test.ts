import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { StreamPrinter } from '../../src/cli/stream-printer';
import { applyModelStreamEvent, MAX_EVENT_TEXT, parseModelStreamEvent, type LiveAnswer, type ModelStreamEvent } from '../../src/session/model-stream';

const CALL = 'run-1/3';

describe('the events of a model call', () => {
  test('pieces of text and arguments, in any cut, put back together are the answer; a reset drops what came before it, and what the cut attempt still writes is passed over', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 12 }), { maxLength: 20 }), fc.array(fc.string({ maxLength: 8 }), { maxLength: 10 }), (texts, args) => {
        const events: ModelStreamEvent[] = [
          { type: 'start', call: CALL, attempt: 1 },
          { type: 'text', call: CALL, attempt: 1, text: 'lost words' },
          { type: 'reset', call: CALL, attempt: 2 },
          ...texts.flatMap((text): ModelStreamEvent[] => [
            { type: 'text', call: CALL, attempt: 2, text },
            { type: 'text', call: CALL, attempt: 1, text: 'a cut attempt, still writing' },
          ]),
          { type: 'end', call: CALL, attempt: 1, outcome: 'cancelled' },
          { type: 'tool', call: CALL, attempt: 2, index: 0, name: 'todo_write', id: 'call_1' },
          ...args.map((text): ModelStreamEvent => ({ type: 'arguments', call: CALL, attempt: 2, index: 0, text })),
          { type: 'end', call: CALL, attempt: 2, outcome: 'completed', finishReason: 'tool_calls' },
          { type: 'text', call: CALL, attempt: 2, text: 'after the end' },
        ];
        const answer = events.reduce<LiveAnswer | null>(applyModelStreamEvent, null);
        assert.deepEqual(answer, {
          call: CALL,
          attempt: 2,
          text: texts.join(''),
          toolCalls: [{ index: 0, name: 'todo_write', id: 'call_1', arguments: args.join('') }],
          outcome: 'completed',
        });
      }),
    );
  });

  test('events of another call than the one being shown are passed over, and so is a late reset of an earlier attempt', () => {
    const shown = applyModelStreamEvent(null, { type: 'start', call: CALL, attempt: 1 });
    assert.equal(applyModelStreamEvent(shown, { type: 'text', call: 'other/1', attempt: 1, text: 'x' }), shown);
    assert.equal(applyModelStreamEvent(null, { type: 'text', call: CALL, attempt: 1, text: 'x' }), null, 'a reader that joined mid-call waits for the next start');
    const retried = applyModelStreamEvent(shown, { type: 'reset', call: CALL, attempt: 3 });
    assert.equal(applyModelStreamEvent(retried, { type: 'reset', call: CALL, attempt: 2 }), retried);
  });

  test('every well-formed event is read back as itself', () => {
    const events: ModelStreamEvent[] = [
      { type: 'start', call: CALL, attempt: 1 },
      { type: 'reset', call: CALL, attempt: 3 },
      { type: 'text', call: CALL, attempt: 1, text: 'héllo' },
      { type: 'tool', call: CALL, attempt: 1, index: 2, name: 'read_file' },
      { type: 'tool', call: CALL, attempt: 2, index: 0, name: 'todo_write', id: 'call_0' },
      { type: 'arguments', call: CALL, attempt: 2, index: 0, text: '{"todos":' },
      { type: 'end', call: CALL, attempt: 2, outcome: 'failed' },
      { type: 'end', call: CALL, attempt: 1, outcome: 'completed', finishReason: null },
    ];
    for (const event of events) assert.deepEqual(parseModelStreamEvent(JSON.parse(JSON.stringify(event))), event);
  });

  test('anything else another client could put in the stream is not an event', () => {
    const junk: unknown[] = [
      null,
      'text',
      [],
      {},
      { type: 'text', attempt: 1, text: 'no call' },
      { type: 'text', call: CALL, attempt: 1 },
      { type: 'text', call: CALL, text: 'no attempt' },
      { type: 'text', call: CALL, attempt: 1, text: 'x'.repeat(MAX_EVENT_TEXT + 1) },
      { type: 'start', call: CALL, attempt: 0 },
      { type: 'start', call: CALL, attempt: 1.5 },
      { type: 'tool', call: CALL, attempt: 1, index: -1, name: 'x' },
      { type: 'tool', call: CALL, attempt: 1, index: 0, name: 7 },
      { type: 'arguments', call: CALL, attempt: 1, index: 1e9, text: '' },
      { type: 'end', call: CALL, attempt: 1, outcome: 'maybe' },
      { type: 'delta', call: CALL, attempt: 1, text: 'x' },
      { type: 'text', call: '', attempt: 1, text: 'x' },
    ];
    for (const value of junk) assert.equal(parseModelStreamEvent(value), undefined, JSON.stringify(value)?.slice(0, 80));
  });
});

describe('chat’s printing of the words', () => {
  function printer() {
    const written: string[] = [];
    const p = new StreamPrinter({ out: (text) => written.push(`out:${text}`), err: (line) => written.push(`err:${line}`) });
    return { p, written };
  }

  test('words go out as they come; a tool call’s name on its own line as soon as it is known; lines about the turn wait for the end of a line of words', () => {
    const { p, written } = printer();
    p.take({ type: 'start', call: CALL, attempt: 1 });
    p.take({ type: 'text', call: CALL, attempt: 1, text: 'Plan' });
    p.line('← Updated todo list: 1 pending, 0 in progress, 0 completed');
    p.take({ type: 'text', call: CALL, attempt: 1, text: 'ning.' });
    p.take({ type: 'tool', call: CALL, attempt: 1, index: 0, name: 'todo_write' });
    p.take({ type: 'arguments', call: CALL, attempt: 1, index: 0, text: '{}' });
    p.take({ type: 'end', call: CALL, attempt: 1, outcome: 'completed' });
    p.line('→ todo_write {}');
    assert.deepEqual(written, ['out:Plan', 'out:ning.', 'out:\n', 'err:← Updated todo list: 1 pending, 0 in progress, 0 completed', 'err:→ todo_write …', 'err:→ todo_write {}']);
  });

  test('a retried call starts its words on a new line, saying so, and the answer counts as printed only once its call ended whole', async () => {
    const { p, written } = printer();
    p.take({ type: 'start', call: CALL, attempt: 1 });
    p.take({ type: 'text', call: CALL, attempt: 1, text: 'Half an' });
    p.take({ type: 'reset', call: CALL, attempt: 2 });
    p.take({ type: 'text', call: CALL, attempt: 2, text: 'Done.' });
    assert.equal(await p.printed('Done.', 10), false, 'not before its end');
    const ended = p.printed('Done.', 5000);
    p.take({ type: 'end', call: CALL, attempt: 2, outcome: 'completed' });
    assert.equal(await ended, true);
    assert.deepEqual(written, ['out:Half an', 'out:\n', 'err:(the model call is being made again: its answer starts over)', 'out:Done.', 'out:\n']);
  });

  test('with no word heard during the turn (a worker that does not stream), the answer is not waited for', { timeout: 30_000 }, async () => {
    const { p } = printer();
    // An hour to wait: only an answer that does not wait ends this test.
    assert.equal(await p.printed('Done.', 3_600_000), false);
  });
});
