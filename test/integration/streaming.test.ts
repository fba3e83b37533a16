import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import { openSse, type SseEvent } from '../../bench/sse-client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { readStream, streamEnd, streamPublisher, type SessionClient, type StreamEntry } from '../../src/client';
import { startHttpServer } from '../../src/http/server';
import { historyEventsJson, type ExportedHistory } from '../../src/history';
import type { ScriptJson } from '../../src/model-server';
import type { ModelStreamEvent } from '../../src/session/model-stream';
import { openStreamStore, StreamStoreError } from '../../src/streams';
import { SESSION_WORKFLOW_TYPE } from '../../workflows/messages';
import type { TodoPolicy } from '../../src/todo';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, startTestBed, testStreamStore, until, uniqueId, useTestBed } from '../helpers';

const POLICY: TodoPolicy = { allowParallelInProgress: false };

const TASK = 'Write the release notes';
/** Long enough to be cut mid-way: 150 tokens of 4 characters. */
const NOTES = 'Release 2.1 streams the model’s words as they are written; '.repeat(10).trim();
const SCRIPT: ScriptJson = {
  conversations: [
    {
      name: 'notes',
      match: { firstUserMessage: TASK },
      steps: [
        { respond: { content: 'Planning first.', tool_calls: [{ name: 'todo_write', arguments: { todos: [{ content: 'Write the notes', status: 'in_progress' }] } }] } },
        { respond: { tool_calls: [{ name: 'todo_write', arguments: { todos: [{ content: 'Write the notes', status: 'completed' }] } }] } },
        { respond: { content: NOTES } },
      ],
    },
  ],
};

/** Streams at 150 tokens a second: the notes take a second, long enough to disconnect in the middle. */
const bed = useTestBed('streaming', POLICY, { model: { script: SCRIPT, streaming: { tokensPerSecond: 150 } }, http: {} });

/** Sends the task to a fresh session (or `sessionId`) and waits for its turn to end. */
async function runTurn(client: SessionClient, sessionId = uniqueId('notes')): Promise<string> {
  const sent = await client.sendMessage(sessionId, TASK);
  const outcome = await until(`the turn of ${sessionId}`, async () => {
    const snapshot = await client.session(sessionId);
    const last = snapshot.agent.lastTurn;
    return last?.messageId === sent.messageId && snapshot.agent.activity.state === 'idle' && !snapshot.turnOpen ? last : undefined;
  });
  assert.equal(outcome.reason, 'completed', outcome.detail ?? '');
  return sessionId;
}

/**
 * Which events depend on timing alone, not on what the session did: how events fell into
 * workflow tasks (and so the search-attribute upserts made once per task), and when an activity
 * was picked up. Two runs of the same turn, streamed or not, differ in those and nothing else.
 */
const TIMING_EVENTS = new Set([
  'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED',
  'EVENT_TYPE_WORKFLOW_TASK_STARTED',
  'EVENT_TYPE_WORKFLOW_TASK_COMPLETED',
  'EVENT_TYPE_ACTIVITY_TASK_STARTED',
  'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
]);

/**
 * A history as a comparison sees it: every event that is the session's own doing, in order, with
 * its type and attributes and its payloads decoded; what differs between any two runs of the same
 * turn (times, a turn's start in ms included, ids and event ids, identities, task queues, the session's own id, the worker's
 * build) put aside.
 */
function shape(history: ExportedHistory, sessionId: string): unknown {
  const ignored = new Set(['eventId', 'eventTime', 'taskId', 'identity', 'requestId', 'workerVersion', 'deploymentVersion', 'workerDeploymentVersion', 'versioningOverride', 'workerDeploymentName', 'deployment', 'sdkMetadata', 'meteringMetadata', 'firstExecutionRunId', 'originalExecutionRunId', 'newExecutionRunId', 'workflowTaskTimeout', 'header', 'versioningBehavior', 'workerVersionStamp', 'useWorkflowBuildId', 'binaryChecksum', 'inheritedBuildId', 'workflowId', 'runId', 'taskQueue']);
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value === 'string') {
      return value
        .split(sessionId)
        .join('<session>')
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
        .replace(/"startedAtMs":\d+/g, '"startedAtMs":<ms>');
    }
    if (typeof value !== 'object' || value === null) return value;
    const record = value as Record<string, unknown>;
    if ('metadata' in record && typeof record.data === 'string') {
      return walk(Buffer.from(record.data, 'base64').toString('utf8'));
    }
    return Object.fromEntries(
      Object.entries(record)
        .filter(([key]) => !ignored.has(key) && !key.endsWith('EventId'))
        .map(([key, inner]) => [key, walk(inner)]),
    );
  };
  return historyEventsJson(history)
    .filter((event) => !TIMING_EVENTS.has(String((event as { eventType?: unknown }).eventType)))
    .map(walk);
}

/** Reads `url` until `stop` says so (or the time runs out); the events in order. */
async function readEvents(url: string, headers: Record<string, string>, stop: (events: SseEvent[]) => boolean, ms = 60_000): Promise<{ status: number; events: SseEvent[] }> {
  const connection = await openSse(url, headers);
  const events: SseEvent[] = [];
  const timer = setTimeout(() => connection.close(), ms);
  try {
    for await (const event of connection.events) {
      events.push(event);
      if (stop(events)) break;
    }
  } finally {
    clearTimeout(timer);
    connection.close();
  }
  return { status: connection.status, events };
}

describe('streaming the model’s words', () => {
  test('a streamed turn leaves the very history a turn without streaming leaves, and so does one whose model refuses to stream (asked streamed once, then not)', { timeout: 240_000 }, async () => {
    await bed.ready;
    const streamed = await runTurn(bed.client);
    assert.ok(
      bed.model.requests().every((request) => request.stream && request.streamed),
      'every model call of the streaming worker was streamed',
    );
    const plainBed = await startTestBed('streaming-off', POLICY, { model: { script: SCRIPT }, worker: { agent: { stream: false } } });
    const refusingBed = await startTestBed('streaming-refused', POLICY, { model: { script: SCRIPT, streaming: { mode: 'refuse' } } });
    try {
      const plain = await runTurn(plainBed.client);
      const refused = await runTurn(refusingBed.client);
      await runTurn(refusingBed.client);
      assert.ok(plainBed.model.requests().every((request) => !request.stream), 'the worker told not to stream never asked for it');
      assert.deepEqual(
        refusingBed.model.requests().map((request) => [request.stream, request.status]),
        [[true, 400], ...Array.from({ length: 6 }, () => [false, 200])],
        'a model that refuses is asked streamed once; the worker remembers',
      );
      const expected = shape(await plainBed.client.exportHistory(plain), plain);
      assert.deepEqual(shape(await bed.client.exportHistory(streamed), streamed), expected, 'streamed: the same events, types and payloads');
      assert.deepEqual(shape(await refusingBed.client.exportHistory(refused), refused), expected, 'fallen back: the same events, types and payloads');
    } finally {
      await Promise.all([plainBed.close(), refusingBed.close()]);
    }
  });

  test('a reader that disconnects mid-answer and comes back with Last-Event-ID gets every event once, in order, and the words make the durable answer', { timeout: 120_000 }, async () => {
    await bed.ready;
    const sessionId = uniqueId('resume');
    await bed.client.start(sessionId);
    const url = `${bed.http.url}/sessions/${encodeURIComponent(sessionId)}/stream`;
    // Between turns: 200 at once, and the first event says where reading begins.
    const first = await openSse(url);
    assert.equal(first.status, 200);
    const ready = (await first.events.next()).value as SseEvent;
    assert.equal(ready.event, 'ready');
    const sent = bed.client.sendMessage(sessionId, TASK);
    const before: SseEvent[] = [];
    let written = '';
    for await (const event of first.events) {
      before.push(event);
      const data = JSON.parse(event.data) as { type?: string; text?: string };
      if (data.type === 'start') written = '';
      if (data.type === 'text') written += data.text;
      // Some way into the notes (the third call's text, sent five times a second), the connection drops.
      if (written.length > 40 && NOTES.startsWith(written)) break;
    }
    first.close();
    const lastId = before.at(-1)!.id!;
    const after = await readEvents(url, { 'Last-Event-ID': lastId }, (events) => events.some((event) => event.event === 'end' && JSON.parse(event.data).finishReason === 'stop'));
    assert.equal(after.status, 200);
    assert.equal(after.events[0]?.event, 'ready');
    assert.equal(JSON.parse(after.events[0]!.data).from, Number(lastId) + 1);
    await sent;

    const withIds = [...before, ...after.events].filter((event) => event.id !== null);
    const ids = withIds.map((event) => Number(event.id));
    assert.deepEqual(ids, ids.map((_, k) => ids[0]! + k), 'every offset once, in order, none missing');
    assert.ok(!withIds.some((event) => event.event === 'gap'));
    const events = withIds.map((event) => JSON.parse(event.data) as { type: string; call: string; text?: string });
    const lastCall = events.filter((event) => event.type === 'start').at(-1)!.call;
    const words = events.filter((event) => event.type === 'text' && event.call === lastCall).map((event) => event.text).join('');
    const outcome = await until('the turn to end', async () => (await bed.client.session(sessionId)).agent.lastTurn ?? undefined);
    assert.equal(words, outcome.answer);
    assert.equal(words, NOTES);
    // The tool call's name came before its arguments, with its id.
    const tool = events.find((event) => event.type === 'tool') as unknown as { name: string; id: string };
    assert.deepEqual([tool.name, tool.id], ['todo_write', 'call_notes_0_0']);
  });

  test('the stream answers 404 for a missing session, 400 naming a bad Last-Event-ID or from, and reads from the end for an offset past it', async () => {
    await bed.ready;
    const missing = await openSse(`${bed.http.url}/sessions/${encodeURIComponent(uniqueId('nobody'))}/stream`);
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.body!).code, 'session-not-found');
    const sessionId = uniqueId('bad-ids');
    await bed.client.start(sessionId);
    const url = `${bed.http.url}/sessions/${encodeURIComponent(sessionId)}/stream`;
    for (const [headers, query, named] of [
      [{ 'Last-Event-ID': 'abc' }, '', 'Last-Event-ID'],
      [{ 'Last-Event-ID': '-1' }, '', 'Last-Event-ID'],
      [{ 'Last-Event-ID': '99999999999999999999' }, '', 'Last-Event-ID'],
      [{}, '?from=1.5', 'from'],
    ] as const) {
      const refused = await openSse(url + query, headers);
      assert.equal(refused.status, 400, `${JSON.stringify(headers)} ${query}`);
      const body = JSON.parse(refused.body!) as { code: string; error: string };
      assert.equal(body.code, 'invalid-input');
      assert.match(body.error, new RegExp(`^${named} must be a stream offset`));
    }
    const ahead = await readEvents(url, { 'Last-Event-ID': '1000000' }, (events) => events.length >= 1, 20_000);
    const ready = JSON.parse(ahead.events[0]!.data) as { from: number; note?: string };
    assert.equal(ahead.events[0]!.event, 'ready');
    assert.match(ready.note ?? '', /offset 1000001 is past the end of this stream/);
  });

  test('the stream of a session no worker serves opens all the same (Temporal alone says it exists), and a workflow that is not a session is 404', { timeout: 60_000 }, async () => {
    await bed.ready;
    const nobody = `nobody-polls-${uniqueId('queue')}`;
    const sessionId = uniqueId('unserved');
    await bed.client.temporal.workflow.start(SESSION_WORKFLOW_TYPE, { workflowId: sessionId, taskQueue: nobody, args: [{}] });
    const other = uniqueId('not-a-session');
    await bed.client.temporal.workflow.start('somethingElse', { workflowId: other, taskQueue: nobody, args: [] });
    try {
      const { status, events } = await readEvents(`${bed.http.url}/sessions/${encodeURIComponent(sessionId)}/stream`, {}, (seen) => seen.length >= 1, 20_000);
      assert.equal(status, 200);
      assert.equal(events[0]?.event, 'ready');
      const refused = await openSse(`${bed.http.url}/sessions/${encodeURIComponent(other)}/stream`);
      assert.equal(refused.status, 404);
      assert.equal(JSON.parse(refused.body!).code, 'session-not-found');
    } finally {
      await Promise.all([sessionId, other].map((id) => bed.client.temporal.workflow.getHandle(id).terminate('test over')));
    }
  });

  test('streaming starts no workflow: the words go to the stream store, and Temporal holds the session alone', async () => {
    await bed.ready;
    const sessionId = await runTurn(bed.client);
    // The companion stream workflow of earlier releases (`<id>/~stream`) is never started.
    await assert.rejects(bed.client.temporal.workflow.getHandle(`${sessionId}/~stream`).describe(), WorkflowNotFoundError);
    const listed = await bed.client.list();
    assert.ok(listed.some((session) => session.id === sessionId));
    assert.deepEqual((await bed.client.tree(sessionId)).children, []);
    const range = await testStreamStore().range(sessionId);
    assert.equal(range.first, 0);
    assert.ok(range.next > 3, `the turn's words are in the store: ${JSON.stringify(range)}`);
  });

  test('the stream passes the guards every route passes: no token, 401; a Host the service does not answer to, 421', async () => {
    await bed.ready;
    const sessionId = uniqueId('guarded');
    await bed.client.start(sessionId);
    const guarded = await startHttpServer({ client: bed.client, port: 0, token: 'stream-token', streamStore: testStreamStore() });
    try {
      const path = `/sessions/${encodeURIComponent(sessionId)}/stream`;
      const without = await openSse(guarded.url + path);
      assert.equal(without.status, 401);
      assert.equal(JSON.parse(without.body!).code, 'unauthorized');
      const withToken = await openSse(guarded.url + path, { Authorization: 'Bearer stream-token' });
      assert.equal(withToken.status, 200);
      withToken.close();
      const foreignHost = await new Promise<number>((resolve, reject) => {
        const req = request(`${bed.http.url}${path}`, { headers: { Host: 'evil.example' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(foreignHost, 421);
    } finally {
      await guarded.close();
    }
  });

  test('words older than the retention are swept, offsets go on from where they were, and an old offset reads as a gap, never as other words', { timeout: 60_000 }, async () => {
    await bed.ready;
    const target = { store: testStreamStore(), sessionId: uniqueId('swept') };
    const publisher = streamPublisher(target);
    publisher.publish({ type: 'start', call: 'run/1', attempt: 1 }, true);
    publisher.publish({ type: 'text', call: 'run/1', attempt: 1, text: 'old words' }, true);
    publisher.publish({ type: 'end', call: 'run/1', attempt: 1, outcome: 'completed' }, true);
    await publisher.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    // A sweep with a retention of 10 ms: everything written before it is past it (the worker sweeps
    // every stream with its retention; this one, only its own: other tests read the same store).
    const swept = await target.store.sweep(10, [target.sessionId]);
    assert.ok(swept >= 3, `swept ${swept}`);
    assert.deepEqual(await target.store.range(target.sessionId), { first: 3, next: 3 });
    assert.equal(await streamEnd(target), 3, 'the next words go on from offset 3');
    const again = streamPublisher(target);
    again.publish({ type: 'start', call: 'run/2', attempt: 1 }, true);
    await again.close();
    const stop = new AbortController();
    const read: StreamEntry[] = [];
    for await (const entry of readStream(target, 1, { signal: stop.signal })) {
      read.push(entry);
      if (entry.kind === 'event') stop.abort();
    }
    assert.deepEqual(read, [
      { kind: 'gap', from: 1, to: 3 },
      { kind: 'event', offset: 3, event: { type: 'start', call: 'run/2', attempt: 1 } satisfies ModelStreamEvent },
    ]);
  });

  test('a malformed row never stops a reader: it comes as a `malformed` event with its offset, and the words after it come in order', { timeout: 60_000 }, async () => {
    await bed.ready;
    const store = testStreamStore();
    const sessionId = uniqueId('junk');
    await bed.client.start(sessionId);
    const url = `${bed.http.url}/sessions/${encodeURIComponent(sessionId)}/stream`;
    const reading = readEvents(url, {}, (events) => events.some((event) => event.event === 'end'), 30_000);
    // Readers come before the first words: the first append wakes them.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await store.append(sessionId, { call: 'run/1', attempt: 1, events: [{ type: 'start', call: 'run/1', attempt: 1 }] });
    // What no model call writes: not an object, an unknown type, a field of the wrong type, an attempt of 0.
    await store.append(sessionId, { call: 'run/1', attempt: 1, events: ['words', null, { type: 'shout', call: 'run/1', attempt: 1 }, { type: 'text', call: 'run/1', attempt: 1, text: 7 }, { type: 'text', call: 'run/1', attempt: 0, text: 'x' }] });
    await store.append(sessionId, { call: 'run/1', attempt: 1, events: [{ type: 'text', call: 'run/1', attempt: 1, text: 'still here' }, { type: 'end', call: 'run/1', attempt: 1, outcome: 'completed' }] });
    const { events } = await reading;
    assert.deepEqual(
      events.map((event) => [event.event, event.id]),
      [['ready', null], ['start', '0'], ...[1, 2, 3, 4, 5].map((k) => ['malformed', String(k)]), ['text', '6'], ['end', '7']],
    );
    assert.match(JSON.parse(events[2]!.data).error, /entry 1 of the stream is not a model event; it is passed over/);
  });

  test('an HTTP service that reads another stream store than the workers write to is refused at start, naming both and the setting', { timeout: 60_000 }, async () => {
    await bed.ready;
    const other = openStreamStore({ location: join(mkdtempSync(join(tmpdir(), 'agent-sessions-other-store-')), 'streams.sqlite') });
    try {
      await assert.rejects(startHttpServer({ client: bed.client, port: 0, streamStore: other }), (error: Error) => {
        assert.ok(error instanceof StreamStoreError);
        assert.equal(error.code, 'stream-store-mismatch');
        assert.match(
          error.message,
          /^the workers of deployment \S+ \(build \S+\) write the model's words to the stream store .+, but this process reads .+other-store.+streams\.sqlite, another store: set AGENT_SESSIONS_STREAM_STORE to the same store for the workers and the HTTP service$/,
        );
        return true;
      });
    } finally {
      await other.close();
    }
  });

  test('hundreds of SSE readers of one session cost the store one wait at a time, and each gets every event once, in order', { timeout: 120_000 }, async () => {
    await bed.ready;
    const store = testStreamStore();
    const sessionId = uniqueId('crowd');
    await bed.client.start(sessionId);
    const url = `${bed.http.url}/sessions/${encodeURIComponent(sessionId)}/stream`;
    const READERS = 300;
    // Every reader is in (its `ready` came) before the first words.
    const connections = await Promise.all(Array.from({ length: READERS }, () => openSse(url)));
    for (const connection of connections) {
      assert.equal(connection.status, 200, `a reader was answered ${connection.status}: ${connection.body ?? ''}`);
      const first = await connection.events.next();
      assert.equal(first.value?.event, 'ready', `a reader's first event: ${JSON.stringify(first)}`);
    }
    const readings = connections.map(async (connection) => {
      const events: SseEvent[] = [];
      for await (const event of connection.events) {
        events.push(event);
        if (event.event === 'end') break;
      }
      connection.close();
      return { events };
    });
    const publisher = streamPublisher({ store, sessionId }, { batchMs: 20 });
    publisher.publish({ type: 'start', call: 'run/1', attempt: 1 }, true);
    for (let k = 0; k < 40; k++) {
      publisher.publish({ type: 'text', call: 'run/1', attempt: 1, text: `w${k} ` }, true);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    publisher.publish({ type: 'end', call: 'run/1', attempt: 1, outcome: 'completed' }, true);
    await publisher.close();
    const all = await Promise.all(readings);
    for (const { events } of all) {
      const ids = events.filter((event) => event.id !== null).map((event) => Number(event.id));
      assert.deepEqual(ids, Array.from({ length: 42 }, (_, k) => k));
    }
    assert.equal(store.stats().peakWaits.get(sessionId), 1, `${READERS} readers, one wait on the store at a time`);
  });

  test('chat --stream prints the words as they come (the answer on stdout, a tool call’s name as soon as it is known); --no-stream prints what it always did', { timeout: 120_000 }, async () => {
    await bed.ready;
    const env = { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue };
    const streamed = await runCli(['chat', uniqueId('cli'), TASK, '--stream'], { env });
    assert.equal(streamed.code, 0, streamed.stderr);
    assert.equal(streamed.stdout, `Planning first.\n${NOTES}\n`);
    assert.match(streamed.stderr, /→ todo_write …\n→ todo_write \{"todos"/);
    const plain = await runCli(['chat', uniqueId('cli'), TASK, '--no-stream'], { env });
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, `${NOTES}\n`);
    assert.doesNotMatch(plain.stderr, /→ todo_write …/);
  });
});
