import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SessionClient } from '../../src/client';
import { findFreePort } from '../../src/devserver';
import { startHttpServer, type HttpServer } from '../../src/http/server';
import { countAcceptedUpdates, httpCall, startWorker, temporalAddress, todo, uniqueId, until, useTestBed } from '../helpers';

const bed = useTestBed('http', { allowParallelInProgress: false }, { http: { policy: { allowParallelInProgress: false }, pollMs: 100 } });

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, base = bed.http.url) {
  return httpCall(base, method, path, body, headers);
}

describe('HTTP API', () => {
  test('a session driven through every endpoint', async () => {
    const id = uniqueId('http-session');
    assert.equal((await call('POST', '/sessions', { id, task: 'ship it' })).status, 201);
    assert.equal((await call('POST', '/sessions', { id })).status, 200, 'starting a running session is fine');

    const write = await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('Plan', 'completed'), todo('Build', 'in_progress')] });
    assert.equal(write.status, 200);
    assert.deepEqual(write.json, { pending: 0, in_progress: 1, completed: 1, message: 'Updated todo list: 0 pending, 1 in progress, 1 completed', version: 1 });
    assert.equal(write.headers.get('etag'), '"1"');

    assert.deepEqual((await call('GET', `/sessions/${id}/todos`)).json, [todo('Plan', 'completed'), todo('Build', 'in_progress')]);
    const session = await call('GET', `/sessions/${id}`);
    assert.equal(session.json.sessionId, id);
    assert.equal(session.json.task, 'ship it');
    assert.equal(session.headers.get('etag'), '"1"');

    assert.equal((await call('POST', `/sessions/${id}/turn/start`)).status, 202);
    assert.equal((await call('GET', `/sessions/${id}/todos`)).json, null);
    assert.equal((await call('POST', `/sessions/${id}/turn/end`)).status, 202);

    const spawned = await call('POST', `/sessions/${id}/subagents`, { name: 'helper', task: 'help' });
    assert.equal(spawned.status, 201);
    assert.deepEqual(spawned.json, { sessionId: `${id}/helper`, name: 'helper' });
    const child = encodeURIComponent(`${id}/helper`);
    assert.equal((await call('POST', `/sessions/${child}/todo_write`, { todos: [todo('Help', 'in_progress')] })).status, 200);
    assert.equal((await call('GET', `/sessions/${child}`)).json.parent.sessionId, id);

    // The subagent's summary comes from its search attributes: wait until visibility shows its write.
    const tree = await until('the tree to show the subagent at version 1', async () => {
      const answer = await call('GET', `/sessions/${id}/tree`);
      return answer.json.children?.[0]?.version === 1 ? answer : undefined;
    });
    const parentState = (await call('GET', `/sessions/${id}`)).json;
    const helperState = (await call('GET', `/sessions/${child}`)).json;
    const root = { id, name: null, todos: null, counts: { pending: 0, in_progress: 0, completed: 0 }, closed: false, version: 4, updatedAt: parentState.updatedAt, inProgressContent: [], subagents: 1 };
    const helper = {
      id: `${id}/helper`,
      name: 'helper',
      counts: { pending: 0, in_progress: 1, completed: 0 },
      closed: false,
      version: 1,
      updatedAt: helperState.updatedAt,
      inProgressContent: ['Help'],
      subagents: 0,
      children: [],
    };
    assert.deepEqual(tree.json, { ...root, children: [helper], nextPageToken: null });
    const full = await call('GET', `/sessions/${id}/tree?full=true`);
    assert.deepEqual(full.json, { ...root, children: [{ ...helper, todos: [todo('Help', 'in_progress')] }], nextPageToken: null });

    const listed = await call('GET', '/sessions?open=true');
    assert.ok((listed.json as Array<{ id: string }>).some((s) => s.id === id));

    const history = await call('GET', `/sessions/${id}/history`);
    assert.equal(countAcceptedUpdates(history.json), 1);
    const timeline = await call('GET', `/sessions/${id}/timeline`);
    assert.deepEqual(
      (timeline.json.steps as Array<{ type: string }>).map((s) => s.type),
      ['todo/write', 'turn/start', 'turn/end', 'subagent/spawn'],
    );
    assert.deepEqual(timeline.json.steps[0].todos, [todo('Plan', 'completed'), todo('Build', 'in_progress')]);

    const closed = await call('POST', `/sessions/${id}/close`);
    assert.equal(closed.status, 200);
    assert.equal(closed.json.closed, true);
    assert.equal(closed.json.children[0].closed, true);
  });

  test('each error has its status and a JSON sentence, never a stack trace', async () => {
    const id = uniqueId('http-errors');
    await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('a')] });

    const rejected = await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('a', 'in_progress'), todo('b', 'in_progress')] });
    assert.equal(rejected.status, 422);
    assert.match(rejected.json.error, /at most one todo may be in_progress .*got 2/);
    assert.equal(rejected.json.rule, 'parallel-in-progress');
    assert.equal(rejected.json.code, 'rejected');
    assert.equal(rejected.json.problems[0].rule, 'parallel-in-progress');
    const shape = await call('POST', `/sessions/${id}/todo_write`, { todos: [{ content: 'a', status: 'pending', priority: 1 }] });
    assert.equal(shape.status, 422);
    assert.match(shape.json.error, /unknown property "priority"/);
    assert.deepEqual([shape.json.code, shape.json.rule], ['rejected', 'shape']);

    const codeOf = async (answer: Promise<{ status: number; json: any }>) => {
      const { status, json } = await answer;
      return `${status} ${json.code}`;
    };
    assert.equal(await codeOf(call('POST', `/sessions/${id}/todo_write`, '{"todos": [')), '400 invalid-input');
    assert.equal(await codeOf(call('POST', '/sessions', { nope: true })), '400 invalid-input');
    assert.equal(await codeOf(call('POST', '/sessions', { id: 'a/b' })), '400 invalid-session-id');
    // Temporal's visibility never answers a search for U+0000: no new id holds it, no listing filters on it.
    assert.equal(await codeOf(call('POST', '/sessions', { id: 'a\u0000b' })), '400 invalid-session-id');
    assert.equal(await codeOf(call('GET', '/sessions?parent=a%00b')), '400 invalid-input');
    assert.equal(await codeOf(call('GET', `/sessions/${uniqueId('missing')}`)), '404 session-not-found');
    assert.equal(await codeOf(call('GET', '/no/such/endpoint')), '404 no-such-endpoint');
    // A small limit, so the whole body is sent before the answer comes back.
    const small = await startHttpServer({ client: bed.client, port: 0, bodyLimitBytes: 1000 });
    try {
      const tooLarge = await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('x'.repeat(1500))] }, {}, small.url);
      assert.equal(tooLarge.status, 413);
      assert.match(tooLarge.json.error, /larger than 1000 bytes/);
      assert.equal(tooLarge.json.code, 'body-too-large');
    } finally {
      await small.close();
    }

    const stale = await call('POST', `/sessions/${id}/todo_write`, { todos: [] }, { 'If-Match': '"0"' });
    assert.equal(stale.status, 412);
    assert.deepEqual([stale.json.code, stale.json.rule], ['rejected', 'stale-version']);
    assert.match(stale.json.error, /version 0 but the session is at version 1/);
    assert.equal(await codeOf(call('POST', `/sessions/${id}/todo_write`, { todos: [] }, { 'If-Match': 'abc' })), '400 invalid-input');
    assert.equal((await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('v2')] }, { 'If-Match': '1' })).status, 200);

    const first = await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('once')] }, { 'Idempotency-Key': 'k-1' });
    const again = await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('twice')] }, { 'Idempotency-Key': 'k-1' });
    assert.deepEqual(again.json, first.json);
    assert.deepEqual((await call('GET', `/sessions/${id}/todos`)).json, [todo('once')]);

    await call('POST', `/sessions/${id}/close`);
    assert.equal(await codeOf(call('POST', `/sessions/${id}/todo_write`, { todos: [] })), '409 session-closed');
    assert.equal(await codeOf(call('POST', `/sessions/${id}/turn/start`)), '409 session-closed');
    assert.equal(countAcceptedUpdates((await call('GET', `/sessions/${id}/history`)).json), 3, 'no rejected write reached history');
    for (const response of [rejected, shape, stale]) assert.doesNotMatch(JSON.stringify(response.json), /\n\s+at /);
  });

  test('the tool definition, the OpenAPI document and the health check', async () => {
    const tool = await call('GET', '/tool-definition');
    assert.equal(tool.json.function.name, 'todo_write');
    assert.match(tool.json.function.description, /at most one todo in_progress/);
    assert.equal(tool.json.function.parameters.additionalProperties, false);
    const openapi = await call('GET', '/openapi.json');
    assert.equal(openapi.json.openapi, '3.1.0');
    const write = openapi.json.paths['/sessions/{id}/todo_write'].post;
    assert.deepEqual(Object.keys(write.responses).sort(), ['200', '400', '401', '403', '404', '408', '409', '412', '413', '415', '421', '422', '431', '500', '502', '503', '504']);
    const bodySchema = write.requestBody.content['application/json'].schema;
    const resolved = bodySchema.$ref ? openapi.json.components.schemas[bodySchema.$ref.split('/').pop()] : bodySchema;
    assert.equal(resolved.additionalProperties, false);
    assert.equal(resolved.properties.todos.items.additionalProperties, false);
    for (const path of ['/sessions', '/sessions/{id}', '/sessions/{id}/events', '/sessions/{id}/subagents', '/healthz', '/tool-definition']) {
      assert.ok(openapi.json.paths[path], `${path} is documented`);
    }
    assert.deepEqual((await call('GET', '/healthz')).json, { ok: true, temporal: 'reachable' });
  });

  test('many readers of one session share queries and all get the answer', async () => {
    const id = uniqueId('http-readers');
    await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('read me', 'in_progress')] });
    const answers = await Promise.all(Array.from({ length: 60 }, () => call('GET', `/sessions/${id}`)));
    assert.ok(answers.every((a) => a.status === 200 && a.json.version === 1), JSON.stringify(answers.find((a) => a.status !== 200)?.json));
  });

  test('the event stream sends the state on connect and a change within a second', async () => {
    const id = uniqueId('http-sse');
    await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('first')] });
    const controller = new AbortController();
    const response = await fetch(`${bed.http.url}/sessions/${encodeURIComponent(id)}/events`, { signal: controller.signal });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const nextEvent = async (): Promise<{ event: string; id: string; data: any }> => {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const field = (name: string) => block.split('\n').find((line) => line.startsWith(`${name}:`))?.slice(name.length + 1).trim() ?? '';
          return { event: field('event'), id: field('id'), data: JSON.parse(field('data')) };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
    };
    const initial = await nextEvent();
    assert.equal(initial.event, 'session');
    assert.equal(initial.id, '1');
    assert.deepEqual(initial.data.todos, [todo('first')]);

    const sent = Date.now();
    await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('second', 'in_progress')] });
    const change = await nextEvent();
    const latency = Date.now() - sent;
    assert.equal(change.id, '2');
    assert.deepEqual(change.data.todos, [todo('second', 'in_progress')]);
    assert.ok(latency < 1000, `the change arrived after ${latency} ms`);
    controller.abort();
  });
});

describe('HTTP security and availability', () => {
  test('with a token every endpoint but /healthz and the page needs the bearer token', async () => {
    const guarded = await startHttpServer({ client: bed.client, port: 0, token: 's3cret' });
    try {
      assert.equal((await call('GET', '/sessions', undefined, {}, guarded.url)).status, 401);
      assert.equal((await call('GET', '/sessions', undefined, { Authorization: 'Bearer wrong' }, guarded.url)).status, 401);
      assert.equal((await call('GET', '/openapi.json', undefined, {}, guarded.url)).status, 401);
      assert.equal((await call('GET', '/sessions', undefined, { Authorization: 'Bearer s3cret' }, guarded.url)).status, 200);
      assert.equal((await call('GET', '/healthz', undefined, {}, guarded.url)).status, 200);
      assert.equal((await fetch(`${guarded.url}/`)).status, 200, 'the page loads, then asks for the token');
      assert.equal((await call('GET', '/tool-definition', undefined, { Authorization: 'Bearer s3cret' }, guarded.url)).status, 503, 'no policy given');
    } finally {
      await guarded.close();
    }
  });

  test('binds to 127.0.0.1 by default and sends no CORS headers unless configured', async () => {
    assert.match(bed.http.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const plain = await fetch(`${bed.http.url}/healthz`, { headers: { Origin: 'http://evil.example' } });
    assert.equal(plain.headers.get('access-control-allow-origin'), null);
    const open = await startHttpServer({ client: bed.client, port: 0, corsOrigins: ['http://dashboard.example'] });
    try {
      const allowed = await fetch(`${open.url}/healthz`, { headers: { Origin: 'http://dashboard.example' } });
      assert.equal(allowed.headers.get('access-control-allow-origin'), 'http://dashboard.example');
    } finally {
      await open.close();
    }
  });

  test('with Temporal unreachable the service answers 503 quickly', async () => {
    const nowhere = SessionClient.lazy({ address: `127.0.0.1:${await findFreePort()}`, taskQueue: bed.taskQueue });
    const down = await startHttpServer({ client: nowhere, port: 0, temporalTimeoutMs: 1500 });
    try {
      const started = Date.now();
      const answer = await call('GET', '/sessions/anything', undefined, {}, down.url);
      assert.equal(answer.status, 503, JSON.stringify(answer.json));
      assert.equal(answer.json.code, 'temporal-unavailable');
      assert.match(answer.json.error, /cannot reach Temporal at 127\.0\.0\.1:\d+/);
      const write = await call('POST', '/sessions/anything/todo_write', { todos: [] }, {}, down.url);
      assert.equal(`${write.status} ${write.json.code}`, '503 temporal-unavailable', 'a refused connection delivered nothing: not "outcome unknown"');
      assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
      assert.equal((await call('GET', '/healthz', undefined, {}, down.url)).status, 503);
    } finally {
      await down.close();
    }
  });
});

describe('answers that never came', () => {
  // A session on a task queue that no worker polls: it exists, its updates are delivered and
  // wait, and nothing answers. The client's own diagnosis (no worker) is put off, so the HTTP
  // time limit is what ends the wait.
  const lonelyQueue = uniqueId('nobody-polls-this');
  let lonely: SessionClient;
  let impatient: HttpServer;
  before(async () => {
    lonely = await SessionClient.connect({ address: await temporalAddress(), taskQueue: lonelyQueue, diagnoseAfterMs: 60_000 });
    impatient = await startHttpServer({ client: lonely, port: 0, temporalTimeoutMs: 1500 });
  });
  after(async () => {
    await impatient.close();
    await lonely.closeConnection();
  });

  test('spawns and closes that get no answer in time are 504 "outcome unknown" too, without an update id', async () => {
    const id = uniqueId('http-unanswered-close');
    await lonely.start(id);
    for (const path of [`/sessions/${id}/close`, `/sessions/${id}/subagents`]) {
      const answer = await call('POST', path, path.endsWith('subagents') ? { name: 'helper' } : undefined, {}, impatient.url);
      assert.equal(`${answer.status} ${answer.json.code}`, '504 outcome-unknown', `${path}: ${JSON.stringify(answer.json)}`);
      assert.equal(answer.json.updateId, undefined);
      assert.match(answer.json.error, /may or may not have been applied/);
    }
  });

  test('a session whose task queue no worker polls is a 503 "no-worker" once the client has looked', async () => {
    // A queue of its own: Temporal remembers a stopped worker's polls for a while.
    const emptyQueue = uniqueId('nobody-polls-this-either');
    const id = uniqueId('http-no-worker');
    const diagnosing = await SessionClient.connect({ address: await temporalAddress(), taskQueue: emptyQueue, diagnoseAfterMs: 300 });
    await diagnosing.start(id);
    const patient = await startHttpServer({ client: diagnosing, port: 0, temporalTimeoutMs: 10_000 });
    try {
      const read = await call('GET', `/sessions/${id}/todos`, undefined, {}, patient.url);
      assert.equal(`${read.status} ${read.json.code}`, '503 no-worker', JSON.stringify(read.json));
      assert.match(read.json.error, new RegExp(`no worker polls its task queue "${emptyQueue}"`));
      const write = await call('POST', `/sessions/${id}/todo_write`, { todos: [] }, { 'Idempotency-Key': `${id}:w` }, patient.url);
      assert.equal(`${write.status} ${write.json.code}`, '503 no-worker', JSON.stringify(write.json));
      assert.equal(write.json.updateId, `${id}:w`, 'the write waits: its key is in the answer');
    } finally {
      await patient.close();
      await diagnosing.closeConnection();
    }
  });
  test('a write that gets no answer in time is a 504 "outcome unknown" naming the Idempotency-Key that applies it at most once', async () => {
    const id = uniqueId('http-unanswered');
    const started = Date.now();
    const unanswered = await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('Delivered, not yet applied', 'in_progress')] }, {}, impatient.url);
    const took = Date.now() - started;
    assert.equal(unanswered.status, 504, JSON.stringify(unanswered.json));
    assert.equal(unanswered.json.code, 'outcome-unknown');
    const updateId: string = unanswered.json.updateId;
    assert.match(updateId, /^[0-9a-f-]{36}$/, 'the HTTP layer chose the update id');
    assert.match(unanswered.json.error, /within 1500 ms: the change may or may not have been applied/);
    assert.ok(unanswered.json.error.includes(`Idempotency-Key: ${updateId}`), unanswered.json.error);
    assert.ok(took >= 1400 && took < 4000, `answered after ${took} ms`);

    // A read of the same session: it changed nothing, so it says so, and asking again is safe.
    const read = await call('GET', `/sessions/${id}`, undefined, {}, impatient.url);
    assert.equal(`${read.status} ${read.json.code}`, '504 session-timeout', JSON.stringify(read.json));

    // The first request did reach Temporal; once a worker comes it may be applied. Sent again
    // with its key, the write is applied once whatever happened to the first one.
    const late = await startWorker({ allowParallelInProgress: false }, lonelyQueue);
    try {
      const retried = await call('POST', `/sessions/${id}/todo_write`, { todos: [todo('Delivered, not yet applied', 'in_progress')] }, { 'Idempotency-Key': updateId });
      assert.equal(retried.status, 200, JSON.stringify(retried.json));
      assert.equal(retried.json.version, 1);
      assert.equal(countAcceptedUpdates((await call('GET', `/sessions/${id}/history`)).json), 1, 'exactly one accepted write');
    } finally {
      await late.stop();
    }
  });

});
