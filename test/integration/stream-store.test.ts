import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { readStream, type StreamEntry } from '../../src/client';
import { openStreamStore, type StreamStore } from '../../src/streams';
import { streamStoreIsPostgres, testStreamStore, uniqueId } from '../helpers';

/**
 * The stream store itself, on the backend of the run: a SQLite file on the dev target, the
 * cluster's PostgreSQL database on the cluster target (`npm test` sets AGENT_SESSIONS_STREAM_STORE).
 * A second store opened on the same location is what another process sees: its own connection,
 * woken by a NOTIFY (PostgreSQL) or by its poll of the file (SQLite).
 */
const backend = streamStoreIsPostgres() ? 'PostgreSQL' : 'SQLite';
const opened: StreamStore[] = [];

function anotherProcessView(): StreamStore {
  const store = openStreamStore({ location: process.env.AGENT_SESSIONS_STREAM_STORE!, poolSize: 4 });
  opened.push(store);
  return store;
}

after(async () => {
  await Promise.all(opened.map((store) => store.close()));
});

const start = (call: string, attempt = 1) => ({ type: attempt === 1 ? 'start' : 'reset', call, attempt });
const text = (call: string, words: string, attempt = 1) => ({ type: 'text', call, attempt, text: words });

describe(`the stream store (${backend})`, () => {
  test('offsets start at 0 and go on across calls; a batch is one append, its entries in order', async () => {
    const store = testStreamStore();
    const stream = uniqueId('offsets');
    assert.deepEqual(await store.range(stream), { first: 0, next: 0 });
    assert.deepEqual(await store.append(stream, { call: 'run/1', attempt: 1, events: [start('run/1'), text('run/1', 'a'), text('run/1', 'b')] }), { kind: 'appended', first: 0, next: 3 });
    assert.deepEqual(await store.append(stream, { call: 'run/2', attempt: 1, events: [start('run/2')] }), { kind: 'appended', first: 3, next: 4 });
    const read = await store.read(stream, 1);
    assert.deepEqual(read.map((entry) => [entry.offset, JSON.parse(entry.body).type]), [[1, 'text'], [2, 'text'], [3, 'start']]);
    assert.deepEqual(await store.range(stream), { first: 0, next: 4 });
  });

  test('the attempt is the key: a newer attempt of a call is appended (readers get its reset), and what an older attempt writes after it is dropped', async () => {
    const store = testStreamStore();
    const stream = uniqueId('attempts');
    await store.append(stream, { call: 'run/1', attempt: 1, events: [start('run/1'), text('run/1', 'cut')] });
    assert.equal((await store.append(stream, { call: 'run/1', attempt: 2, events: [start('run/1', 2)] })).kind, 'appended');
    assert.deepEqual(await store.append(stream, { call: 'run/1', attempt: 1, events: [text('run/1', 'late words of the cut attempt')] }), { kind: 'stale', attempt: 2 });
    await store.append(stream, { call: 'run/1', attempt: 2, events: [text('run/1', 'again', 2)] });
    const events: StreamEntry[] = [];
    for await (const entry of readStream({ store, sessionId: stream }, 0, { until: () => events.length === 4 })) events.push(entry);
    assert.deepEqual(
      events.map((entry) => (entry.kind === 'event' ? [entry.offset, entry.event.type, entry.event.attempt] : entry)),
      [[0, 'start', 1], [1, 'text', 1], [2, 'reset', 2], [3, 'text', 2]],
    );
  });

  test('a reader in another process, waiting before the first words, is woken by the append (and the wake-up time is reported)', async (t) => {
    const writer = testStreamStore();
    const reader = anotherProcessView();
    const stream = uniqueId('wake');
    const delays: number[] = [];
    for (let k = 0; k < 20; k++) {
      const waiting = reader.waitFor(stream, k, { maxWaitMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const sent = performance.now();
      await writer.append(stream, { call: 'run/1', attempt: 1, events: [k === 0 ? start('run/1') : text('run/1', `w${k}`)] });
      await waiting;
      delays.push(performance.now() - sent);
      assert.equal((await reader.range(stream)).next, k + 1);
    }
    delays.sort((a, b) => a - b);
    t.diagnostic(`${backend}: append to a waiting reader on another connection, p50 ${delays[10]!.toFixed(1)} ms, p95 ${delays[18]!.toFixed(1)} ms, max ${delays[19]!.toFixed(1)} ms`);
  });

  test('the retention sweep drops what is older than the retention and nothing newer; offsets stay', async () => {
    const store = testStreamStore();
    const old = uniqueId('old');
    const fresh = uniqueId('fresh');
    await store.append(old, { call: 'run/1', attempt: 1, events: [start('run/1'), text('run/1', 'old')] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await store.append(fresh, { call: 'run/9', attempt: 1, events: [start('run/9')] });
    // Only this test's streams: other tests read the same store at the same time.
    await store.sweep(200, [old, fresh]);
    assert.deepEqual(await store.range(old), { first: 2, next: 2 });
    assert.deepEqual(await store.range(fresh), { first: 0, next: 1 });
    assert.deepEqual(await store.append(old, { call: 'run/2', attempt: 1, events: [start('run/2')] }), { kind: 'appended', first: 2, next: 3 });
  });

  test('every store has an identity of its own, the same for every process that opens it', async () => {
    const mine = await testStreamStore().identity();
    const theirs = await anotherProcessView().identity();
    assert.deepEqual(theirs, mine);
    assert.equal(mine.kind, streamStoreIsPostgres() ? 'postgres' : 'sqlite');
    assert.doesNotMatch(mine.location, /:[^:@/]+@/, 'no password in the location');
  });
});
