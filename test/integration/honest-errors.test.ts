import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { NativeConnection, Worker } from '@temporalio/worker';
import { NoWorkerError, SessionBrokenError, TemporalUnavailableError, type SessionClient } from '../../src/client';
import { connectClient, countAcceptedUpdates, runCli, startWorker, temporalAddress, todo, uniqueId } from '../helpers';

const brokenQueue = uniqueId('broken');
const idleQueue = uniqueId('nobody-polls');
let brokenWorker: Worker;
let brokenRun: Promise<void>;
let connection: NativeConnection;
let broken: SessionClient;
let idle: SessionClient;

before(async () => {
  connection = await NativeConnection.connect({ address: await temporalAddress() });
  brokenWorker = await Worker.create({
    connection,
    taskQueue: brokenQueue,
    workflowsPath: join(__dirname, '..', 'fixtures', 'broken-session-workflow.ts'),
  });
  brokenRun = brokenWorker.run();
  broken = await connectClient(brokenQueue);
  idle = await connectClient(idleQueue);
});

after(async () => {
  await broken.closeConnection();
  await idle.closeConnection();
  brokenWorker.shutdown();
  await brokenRun;
  await connection.close();
});

describe('a session whose workflow task fails', () => {
  test('a query says the session is broken, why, and where to look, within seconds, not "cannot reach Temporal"', async () => {
    const id = uniqueId('broken');
    await broken.start(id);
    const started = Date.now();
    await assert.rejects(broken.todos(id), (error: unknown) => {
      assert.ok(error instanceof SessionBrokenError, String(error));
      assert.equal(error.code, 'session-broken');
      assert.match(error.message, /is broken: its workflow task fails/);
      assert.match(error.message, /todos\[0\]\.content repeats "Run lint"/);
      assert.match(error.message, /agent-sessions history/);
      return true;
    });
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  });

  test('the CLI prints the same sentence and exits 1', async () => {
    const id = uniqueId('broken-cli');
    await broken.start(id);
    const result = await runCli(['todos', id], { env: { AGENT_SESSIONS_TASK_QUEUE: brokenQueue } });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /is broken: its workflow task fails/);
    assert.doesNotMatch(result.stderr, /cannot reach Temporal/);
  });
});

describe('a session nobody serves', () => {
  test('a query says no worker polls its task queue and how to start one', async () => {
    const id = uniqueId('idle');
    await idle.start(id);
    await assert.rejects(idle.session(id), (error: unknown) => {
      assert.ok(error instanceof NoWorkerError, String(error));
      assert.match(error.message, new RegExp(`no worker polls its task queue "${idleQueue}"`));
      assert.match(error.message, /agent-sessions worker --allow-parallel-in-progress/);
      return true;
    });
  });

  test('a write says it waits, with its update id; sent again once a worker runs, it is applied exactly once', async () => {
    const id = uniqueId('idle-write');
    const error = await idle.todoWrite(id, { todos: [todo('Wait for me')] }).then(
      () => assert.fail('the write cannot be answered without a worker'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof NoWorkerError, String(error));
    assert.ok(error.pendingUpdateId !== undefined);
    assert.match(error.message, /may still be applied/);
    const worker = await startWorker({ allowParallelInProgress: true }, idleQueue);
    try {
      const result = await idle.todoWrite(id, { todos: [todo('Wait for me')] }, { updateId: error.pendingUpdateId! });
      assert.equal(result.version, 1);
      assert.equal(countAcceptedUpdates(await idle.exportHistory(id)), 1);
    } finally {
      await worker.stop();
    }
  });
});

describe('Temporal unreachable', () => {
  test('the CLI says it cannot reach Temporal at the address, and exits 1', async () => {
    const result = await runCli(['todos', 'anything'], { env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /cannot reach Temporal at 127\.0\.0\.1:1/);
  });

  test('the library throws TemporalUnavailableError with code temporal-unavailable', async () => {
    const { SessionClient } = await import('../../src/client');
    await assert.rejects(SessionClient.connect({ address: '127.0.0.1:1' }), (error: unknown) => error instanceof TemporalUnavailableError && error.code === 'temporal-unavailable');
  });
});
