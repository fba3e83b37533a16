import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { SessionClient } from '../../src/client';
import { findFreePort } from '../../src/devserver';
import { startHttpServer, type HttpServer } from '../../src/http/server';
import type { TodoPolicy } from '../../src/todo';
import { createWorker, type SessionWorker } from '../../src/worker';
import { acceptedTodoWrites } from '../../bench/load/verify-load';
import { httpCall, todo, uniqueId, type HttpAnswer } from '../helpers';
import { killStrays, OwnTemporal, sleep } from './fault-helpers';

const policy: TodoPolicy = { allowParallelInProgress: false };
/** "Quickly": how long a request may take to say 503 while Temporal cannot be reached. */
const QUICK_MS = 3_000;
/** How long the service may take to serve again once Temporal is back. */
const RECOVERY_MS = 20_000;

let worker: SessionWorker | undefined;
let running: Promise<void> | undefined;
let httpClient: SessionClient | undefined;
let http: HttpServer | undefined;

after(async () => {
  await http?.close();
  await httpClient?.closeConnection();
  worker?.shutdown();
  await running;
  await killStrays();
});

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return httpCall(http!.url, method, path, body, headers);
}

test('the HTTP service answers 503 quickly while Temporal is unreachable, and serves again by itself when Temporal is back', { timeout: 120_000 }, async (t) => {
  // Nothing listens on this port yet: the service starts while Temporal is down, as `serve` may.
  const port = await findFreePort();
  const taskQueue = uniqueId('faults-http');
  httpClient = SessionClient.lazy({ address: `127.0.0.1:${port}`, taskQueue });
  http = await startHttpServer({ client: httpClient, port: 0, policy });

  const session = uniqueId('unreachable');
  const write = { todos: [todo('Written while Temporal came and went', 'in_progress')] };
  // One idempotency key for every try of this write once Temporal is back: it lands once. The
  // writes tried while Temporal is down use keys of their own: a 503 means "not written", so
  // none of them may turn up in the history later.
  const key = { 'Idempotency-Key': `${session}:the-write` };
  const whileDown = (phase: string) =>
    Promise.all([
      call('GET', '/healthz'),
      call('GET', '/sessions'),
      call('POST', '/sessions', { id: session }),
      call('GET', `/sessions/${session}`),
      call('GET', `/sessions/${session}/history`),
      call('POST', `/sessions/${session}/todo_write`, write, { 'Idempotency-Key': `${session}:${phase}` }),
    ]);
  const recover = async (phase: string): Promise<number> => {
    const started = Date.now();
    for (;;) {
      const answer = await call('POST', `/sessions/${session}/todo_write`, write, key);
      if (answer.status === 200) {
        assert.equal(answer.json.version, 1, `${phase}: the write is applied once, whatever answered before`);
        return Date.now() - started;
      }
      assert.equal(answer.status, 503, `${phase}: a write that cannot be made yet is a 503: ${JSON.stringify(answer.json)}`);
      if (Date.now() - started > RECOVERY_MS) assert.fail(`${phase}: the service did not serve again within ${RECOVERY_MS} ms`);
      await sleep(200);
    }
  };

  const neverUp = await whileDown('never-up');

  const temporal = await OwnTemporal.start(port);
  worker = await createWorker({ ...policy, temporal: { address: temporal.address, taskQueue } });
  running = worker.run();
  await worker.registered();
  const firstRecovery = await recover('Temporal started after the service');
  assert.equal((await call('GET', '/healthz')).status, 200);

  await temporal.kill();
  const gone = await whileDown('gone');
  await temporal.restart();
  const secondRecovery = await recover('Temporal restarted');
  const state = await call('GET', `/sessions/${session}`);
  assert.equal(state.status, 200);
  assert.deepEqual(state.json.todos, write.todos);
  assert.equal(state.json.version, 1);
  const history = await call('GET', `/sessions/${session}/history`);
  assert.deepEqual(acceptedTodoWrites(history.json).map((entry) => entry.updateId), [`${session}:the-write`], 'no write answered 503 landed later');

  const describe = (answers: HttpAnswer[]) => answers.map((answer) => `${answer.request} → ${answer.status} in ${answer.ms} ms`).join('; ');
  t.diagnostic(`Temporal never reached: ${describe(neverUp)}`);
  t.diagnostic(`Temporal killed: ${describe(gone)}`);
  t.diagnostic(`served again ${firstRecovery} ms after Temporal first started, ${secondRecovery} ms after its restart`);

  for (const answer of [...neverUp, ...gone]) {
    assert.equal(answer.status, 503, `${answer.request} while Temporal is unreachable: ${JSON.stringify(answer.json)}`);
    if (answer.request === 'GET /healthz') assert.deepEqual(answer.json, { ok: false, temporal: 'unreachable' });
    else {
      // A refused connection delivered nothing: "unavailable", never "outcome unknown".
      assert.equal(answer.json.code, 'temporal-unavailable', `${answer.request}: ${JSON.stringify(answer.json)}`);
      assert.match(answer.json.error, /Temporal/);
    }
  }
  const slow = [...neverUp, ...gone].filter((answer) => answer.ms > QUICK_MS);
  assert.deepEqual(slow.map((answer) => `${answer.request} took ${answer.ms} ms`), [], `every 503 comes within ${QUICK_MS} ms`);
});
