import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { SessionClient, treeJson } from '../../src/client';
import type { HistoryJson } from '../../src/history/session-history';
import { startHttpServer, type HttpServer } from '../../src/http/server';
import type { TodoPolicy } from '../../src/todo';
import type { SessionSnapshot } from '../../src/session';
import { createWorker, type SessionWorker } from '../../src/worker';
import { httpCall, replaySession, todo, uniqueId, until } from '../helpers';
import { killStrays, OwnTemporal, recordedWrite, retryFailed, sleep, verifyWrites } from './fault-helpers';

const policy: TodoPolicy = { allowParallelInProgress: true };
/** How long the worker and the HTTP service may take to serve again after the server is back. */
const RECOVERY_MS = 30_000;
/** How long the server stays dead: long enough for the worker's polls and the clients' calls to fail. */
const DOWNTIME_MS = 3_000;

let worker: SessionWorker | undefined;
let running: Promise<void> | undefined;
let workerError: unknown;
let client: SessionClient | undefined;
let httpClient: SessionClient | undefined;
let http: HttpServer | undefined;

after(async () => {
  await http?.close();
  await httpClient?.closeConnection();
  await client?.closeConnection();
  worker?.shutdown();
  await running;
  await killStrays();
});

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return httpCall(http!.url, method, path, body, headers);
}

/** Every event of a single-run history export. */
function eventsOf(history: unknown): unknown[] {
  assert.ok(history !== null && typeof history === 'object' && 'events' in history, 'a session of one run');
  return (history as HistoryJson).events;
}

test('a Temporal server SIGKILLed and restarted on its SQLite file keeps sessions, lists, children and histories; the worker and the HTTP service reconnect by themselves', { timeout: 120_000 }, async (t) => {
  const temporal = await OwnTemporal.start();
  const taskQueue = uniqueId('faults-server');
  worker = await createWorker({ ...policy, temporal: { address: temporal.address, taskQueue } });
  running = worker.run().catch((error: unknown) => void (workerError = error));
  await worker.registered();
  client = await SessionClient.connect({ address: temporal.address, taskQueue });
  httpClient = SessionClient.lazy({ address: temporal.address, taskQueue });
  http = await startHttpServer({ client: httpClient, port: 0, policy, pollMs: 100 });

  // Before the crash: a parent in a turn with a list and two subagents (one closed), and a closed session.
  const parent = uniqueId('crash');
  const tests = `${parent}/tests`;
  const docs = `${parent}/docs`;
  const finished = uniqueId('crash-closed');
  await client.start(parent, { task: 'survive a server crash' });
  await client.turnStart(parent);
  await client.todoWrite(parent, { todos: [todo('Plan', 'in_progress')] });
  await client.spawnSubagent(parent, { name: 'tests', task: 'run the suite' });
  await client.spawnSubagent(parent, { name: 'docs' });
  assert.equal((await call('POST', `/sessions/${encodeURIComponent(parent)}/todo_write`, { todos: [todo('Plan', 'completed'), todo('Delegate', 'in_progress')] })).status, 200);
  await client.todoWrite(tests, { todos: [todo('Unit tests', 'completed'), todo('Integration tests', 'in_progress')] });
  await client.todoWrite(docs, { todos: [todo('README', 'completed')] });
  await client.close(docs);
  await client.todoWrite(finished, { todos: [todo('Done and closed', 'completed')] });
  await client.close(finished);
  await until(
    'the parent hears that docs closed',
    async () => ((await client!.session(parent)).children.find((child) => child.name === 'docs')?.closed === true ? true : undefined),
    10_000,
    { everyMs: 200 },
  );

  const ids = [parent, tests, docs, finished];
  const before = new Map<string, { session: SessionSnapshot; events: unknown[] }>();
  for (const id of ids) before.set(id, { session: await client.session(id), events: eventsOf(await client.exportHistory(id)) });
  const treeBefore = treeJson(await client.tree(parent, { full: true }));
  const listedBefore = (await client.list()).filter((listing) => ids.includes(listing.id)).sort((x, y) => x.id.localeCompare(y.id));
  assert.equal(listedBefore.length, 4);

  // A write in flight when the server dies must get its result once it is back, or a clear error.
  const inFlight = recordedWrite(client, uniqueId('crash-inflight'), [todo('Written across the crash', 'in_progress')], `${parent}:in-flight`, 60_000);
  await sleep(20);
  await temporal.kill();
  const killedAt = Date.now();
  await sleep(DOWNTIME_MS);
  await temporal.restart();
  const serving = Date.now();

  // The HTTP service reconnects by itself: a write through it (same Idempotency-Key on every try,
  // so it lands once however many tries it takes) succeeds soon after the server is back.
  const afterCrash = [todo('Plan', 'completed'), todo('Delegate', 'completed'), todo('Recover', 'in_progress')];
  const statuses: number[] = [];
  const written = await until('a write through the HTTP service', async () => {
    const answer = await call('POST', `/sessions/${encodeURIComponent(parent)}/todo_write`, { todos: afterCrash }, { 'Idempotency-Key': `${parent}:after-crash` });
    statuses.push(answer.status);
    return answer.status === 200 ? answer.json : undefined;
  }, RECOVERY_MS, { everyMs: 200 });
  const httpRecoveredIn = Date.now() - serving;
  assert.equal(written.version, before.get(parent)!.session.version + 1, 'the write after the crash is applied once, after the pre-crash ones');

  // The worker never stopped, and the library client reconnects too.
  assert.equal(workerError, undefined, `the worker failed: ${String(workerError)}`);
  assert.equal(worker.worker.getState(), 'RUNNING');
  const clientWrite = await client.todoWrite(tests, { todos: [todo('Unit tests', 'completed'), todo('Integration tests', 'completed')] });
  assert.equal(clientWrite.version, before.get(tests)!.session.version + 1);
  const crossing = await inFlight;
  t.diagnostic(
    `server back ${serving - killedAt} ms after the kill; HTTP write succeeded ${httpRecoveredIn} ms after that (statuses ${statuses.join(', ')}); ` +
      `the write in flight at the kill ${crossing.version !== undefined ? `answered version ${crossing.version}` : `failed: ${crossing.error ?? ''}`} after ${crossing.endedAt - crossing.startedAt} ms`,
  );
  assert.equal(crossing.hung, undefined, 'the write in flight at the kill got an answer');
  await retryFailed(client, [crossing], 60_000);
  assert.deepEqual((await verifyWrites(client, crossing.session, [crossing])).problems, [], 'the write in flight at the kill is applied once');

  // Everything from before the crash is still there, the two new writes on top.
  const parentAfter = await client.session(parent);
  const unchangedPart = ({ todos: _t, counts: _c, version: _v, updatedAt: _u, ...rest }: SessionSnapshot) => rest;
  assert.deepEqual(unchangedPart(parentAfter), unchangedPart(before.get(parent)!.session), 'turn, task and children survive');
  assert.deepEqual(parentAfter.todos, afterCrash);
  assert.equal(parentAfter.version, before.get(parent)!.session.version + 1);
  assert.deepEqual(parentAfter.children, before.get(parent)!.session.children, 'children and their closed state survive');
  assert.equal(parentAfter.turnOpen, true);
  const testsAfter = await client.session(tests);
  assert.deepEqual(testsAfter.parent, { sessionId: parent, name: 'tests' });
  assert.equal(testsAfter.task, 'run the suite');
  for (const id of [docs, finished]) assert.deepEqual(await client.session(id), before.get(id)!.session, `${id} is unchanged`);

  for (const id of ids) {
    const events = eventsOf(await client.exportHistory(id));
    const old = before.get(id)!.events;
    assert.deepEqual(events.slice(0, old.length), old, `the history of ${id} keeps every pre-crash event unchanged`);
    if (id === docs || id === finished) assert.equal(events.length, old.length, `${id} gained no events`);
  }

  const treeAfter = treeJson(await client.tree(parent, { full: true }));
  assert.deepEqual(treeAfter.children.map((child) => child.id), treeBefore.children.map((child) => child.id));
  assert.deepEqual(treeAfter.children.find((child) => child.id === docs), treeBefore.children.find((child) => child.id === docs));
  const listedAfter = (await client.list()).filter((listing) => ids.includes(listing.id)).sort((x, y) => x.id.localeCompare(y.id));
  assert.deepEqual(
    listedAfter.map(({ id, status, parent: p }) => ({ id, status, parent: p })),
    listedBefore.map(({ id, status, parent: p }) => ({ id, status, parent: p })),
  );

  // The HTTP service answers reads of the old state too, and the history still replays.
  const docsOverHttp = await call('GET', `/sessions/${encodeURIComponent(docs)}`);
  assert.equal(docsOverHttp.status, 200);
  assert.deepEqual(docsOverHttp.json, before.get(docs)!.session);
  assert.deepEqual((await call('GET', `/sessions/${encodeURIComponent(finished)}/history`)).json, { events: before.get(finished)!.events });
  const replayed = await replaySession(client, parent, policy);
  assert.deepEqual(replayed.final.todos, afterCrash);
});
