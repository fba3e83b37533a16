import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  InvalidSessionIdError,
  InvalidSettingError,
  SessionClient,
  SpawnRejectedError,
} from '../../src/client';
import { foldHistory, loggedSignals, runCount, runsOf } from '../../src/history';
import { IGNORED_SIGNALS_KEPT } from '../../src/session';
import { assertRejected, countAcceptedUpdates, runCli, runTemporalCli, temporalAddress, todo, uniqueId, until, useTestBed } from '../helpers';

const bed = useTestBed('hostile', { allowParallelInProgress: false });
const { taskQueue } = bed;

/** Starts an `agentSession` workflow the way a foreign client would: any id, any input. */
async function foreignStart(id: string, input?: unknown): Promise<void> {
  const args = ['workflow', 'start', '--type', 'agentSession', '--task-queue', taskQueue, '--workflow-id', id];
  if (input !== undefined) args.push('--input', JSON.stringify(input));
  const started = await runTemporalCli(args);
  assert.equal(started.code, 0, started.stderr);
}

/** How a session run that refused its input ended: its failure's type and message. */
async function refusal(id: string): Promise<{ type: string | undefined; message: string }> {
  try {
    await bed.client.temporal.workflow.getHandle(id).result();
  } catch (error) {
    assert.ok(error instanceof WorkflowFailedError, String(error));
    assert.ok(error.cause instanceof ApplicationFailure, String(error.cause));
    return { type: error.cause.type ?? undefined, message: error.cause.message };
  }
  assert.fail(`session ${id} was expected to refuse its input, but it completed`);
}

async function runsOfSession(id: string): Promise<number> {
  return runCount(await bed.client.exportHistory(id));
}

describe('a spawn onto a taken id', () => {
  test('is refused with [subagent-id-taken], leaves the parent unchanged, and closing the parent never touches the other session', async () => {
    const parent = uniqueId('taken');
    const squatter = `${parent}/b`;
    // A foreign client takes the id a subagent would get. The workflow refuses to serve it,
    // but Temporal never reuses an id, so the id stays taken.
    await foreignStart(squatter);
    assert.match((await refusal(squatter)).message, /top-level session id cannot contain it/);
    await bed.client.start(parent);
    const before = await bed.client.session(parent);
    const refused = await assertRejected(bed.client.spawnSubagent(parent, { name: 'b' }), 'subagent-id-taken', /already taken/, SpawnRejectedError);
    assert.ok(refused.message.includes(JSON.stringify(squatter)), refused.message);
    const afterRefusal = await bed.client.session(parent);
    assert.equal(afterRefusal.version, before.version, 'a refused spawn changes nothing');
    assert.deepEqual(afterRefusal.children, []);
    // The name is free again in the parent: another spawn under a new name works.
    await bed.client.spawnSubagent(parent, { name: 'c' });

    const closing = Date.now();
    const closed = await bed.client.close(parent);
    assert.ok(Date.now() - closing < 20_000, 'close does not wait for a child that never started');
    assert.deepEqual(closed.children.map((c) => [c.name, c.closed]), [['c', true]]);
    assert.deepEqual(loggedSignals(await bed.client.exportHistory(squatter)), [], 'the parent sent nothing to a session it did not start');
    // The offline fold agrees: no child b.
    assert.deepEqual(foldHistory(runsOf(await bed.client.exportHistory(parent))).final.children.map((c) => c.name), ['c']);
  });

  test('the CLI says which id is taken', async () => {
    const env = { AGENT_SESSIONS_TASK_QUEUE: taskQueue };
    const parent = uniqueId('cli-taken');
    await foreignStart(`${parent}/b`);
    assert.equal((await runCli(['start', parent], { env })).code, 0);
    const spawned = await runCli(['spawn', parent, 'b'], { env });
    assert.equal(spawned.code, 1);
    assert.match(spawned.stderr, /\[subagent-id-taken\]/);
    assert.ok(spawned.stderr.includes(`"${parent}/b"`), spawned.stderr);
  });
});

describe('top-level session ids', () => {
  test('our client and the CLI refuse a top-level id with "/" before anything is started', async () => {
    const id = `${uniqueId('slash')}/b`;
    await assert.rejects(bed.client.start(id), InvalidSessionIdError);
    await assert.rejects(bed.client.todoWrite(id, { todos: [todo('x')] }), (error: unknown) => error instanceof Error && /no session/.test(error.message));
    const cli = await runCli(['start', id], { env: { AGENT_SESSIONS_TASK_QUEUE: taskQueue } });
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, /separates a parent session from its subagents/);
    await assert.rejects(bed.client.temporal.workflow.getHandle(id).describe(), 'nothing was started');
  });

  test('a write to a subagent that does not exist does not create a top-level session under its id', async () => {
    const parent = uniqueId('nochild');
    await bed.client.start(parent);
    await assert.rejects(bed.client.todoWrite(`${parent}/ghost`, { todos: [todo('x')] }), /no session/);
    await assert.rejects(bed.client.temporal.workflow.getHandle(`${parent}/ghost`).describe());
  });

  test('a foreign start of a top-level id with "/" fails at once, naming the rule', async () => {
    const id = `${uniqueId('foreign-slash')}/x`;
    await foreignStart(id);
    const { type, message } = await refusal(id);
    assert.equal(type, 'InvalidSessionInput');
    assert.match(message, /"\/" separates a parent session from its subagents/);
  });

  test('a foreign start that claims a parent which did not start it fails', async () => {
    const parent = uniqueId('claimed');
    await bed.client.start(parent);
    const id = `${parent}/forged`;
    await foreignStart(id, { parent: { sessionId: parent, name: 'forged' } });
    assert.match((await refusal(id)).message, /but no workflow started it as a child/);
  });
});

describe('untrusted workflow input', () => {
  for (const value of [0, -5, 3, 1e9, 2.5, '100']) {
    test(`continueAsNewAfter ${JSON.stringify(value)} is refused at start, naming the setting and the range`, async () => {
      const id = uniqueId('can');
      await foreignStart(id, { continueAsNewAfter: value });
      const { type, message } = await refusal(id);
      assert.equal(type, 'InvalidSessionInput');
      assert.match(message, /continueAsNewAfter must be an integer from 10 to 2000/);
      assert.equal(await runsOfSession(id), 1, 'the session never continued as new');
    });
  }

  test('our client refuses an out-of-range continueAsNewAfter before connecting a session', async () => {
    await assert.rejects(SessionClient.connect({ address: await temporalAddress(), taskQueue, continueAsNewAfter: 0 }), InvalidSettingError);
  });

  test('carried state on a fresh start is refused: a forged list and receipts never become the session', async () => {
    const id = uniqueId('forged');
    const forged = {
      turn: 1,
      turnOpen: true,
      todos: [todo('Nobody wrote this', 'in_progress')],
      version: 7,
      closed: false,
      children: [],
      updatedAt: null,
      recentWrites: [{ updateId: 'real-write-1', result: { pending: 0, in_progress: 1, completed: 0, message: 'forged', version: 7 } }],
    };
    await foreignStart(id, { carried: forged });
    const { type, message } = await refusal(id);
    assert.equal(type, 'InvalidSessionInput');
    assert.match(message, /carried state is accepted only in a run that continued from an earlier run/);
  });

  test('unknown input properties are refused, not ignored', async () => {
    const id = uniqueId('unknown-input');
    await foreignStart(id, { policy: { allowParallelInProgress: true } });
    assert.match((await refusal(id)).message, /unknown property "policy"/);
  });

  test('carried state in a real continue-as-new is still accepted', async () => {
    const cas = await SessionClient.connect({ address: await temporalAddress(), taskQueue, continueAsNewAfter: 10 });
    try {
      const id = uniqueId('real-carry');
      for (let i = 0; i < 12; i++) await cas.todoWrite(id, { todos: [todo(`step ${i}`)] });
      assert.ok((await runsOfSession(id)) >= 2);
      assert.deepEqual(await cas.todos(id), [todo('step 11')]);
    } finally {
      await cas.closeConnection();
    }
  });
});

describe('signals the session does not handle', () => {
  test('a todo_write sent as a Signal is not applied but listed, with how to send it as the Update', async () => {
    const id = uniqueId('signal-write');
    await bed.client.todoWrite(id, { todos: [todo('Real write')] });
    const before = await bed.client.session(id);
    const sent = await runTemporalCli(['workflow', 'signal', '--workflow-id', id, '--name', 'todo_write', '--input', JSON.stringify({ todos: [todo('Sent as a signal')] })]);
    assert.equal(sent.code, 0, sent.stderr);
    await until('the ignored signal', async () => ((await bed.client.session(id)).ignoredSignals.length > 0 ? true : undefined), 10_000);
    const session = await bed.client.session(id);
    assert.deepEqual(session.todos, [todo('Real write')], 'the signal changed nothing');
    assert.equal(session.version, before.version, 'not even the version');
    const [ignored] = session.ignoredSignals;
    assert.equal(ignored?.name, 'todo_write');
    assert.match(ignored?.reason ?? '', /todo_write is an Update, not a Signal/);
    assert.match(ignored?.reason ?? '', /temporal workflow update execute --workflow-id .* --name todo_write/);
    assert.ok(!Number.isNaN(Date.parse(ignored?.at ?? '')));
    assert.equal(countAcceptedUpdates(await bed.client.exportHistory(id)), 1);
    // The offline fold lists it the same way.
    const offline = foldHistory(runsOf(await bed.client.exportHistory(id))).final;
    assert.deepEqual(offline.ignoredSignals.map((s) => [s.name, s.reason]), session.ignoredSignals.map((s) => [s.name, s.reason]));
  });

  test('an unknown signal name is listed too, and the list is bounded, newest last, and carried across continue-as-new', async () => {
    const cas = await SessionClient.connect({ address: await temporalAddress(), taskQueue, continueAsNewAfter: 10 });
    try {
      const id = uniqueId('signal-flood');
      await cas.start(id);
      const handle = cas.temporal.workflow.getHandle(id);
      for (let i = 0; i < IGNORED_SIGNALS_KEPT + 5; i++) await handle.signal(`nonsense-${i}`);
      await until('the last signal', async () => ((await cas.session(id)).ignoredSignals.at(-1)?.name === `nonsense-${IGNORED_SIGNALS_KEPT + 4}` ? true : undefined), 10_000);
      const flooded = await cas.session(id);
      assert.equal(flooded.ignoredSignals.length, IGNORED_SIGNALS_KEPT);
      assert.equal(flooded.ignoredSignals[0]?.name, 'nonsense-5');
      assert.match(flooded.ignoredSignals[0]?.reason ?? '', /handles no signal named "nonsense-5"; its signals are turn\/start/);
      assert.equal(flooded.version, 0, 'ignored signals do not move the version');
      for (let i = 0; i < 12; i++) await cas.todoWrite(id, { todos: [todo(`step ${i}`)] });
      assert.ok((await runsOfSession(id)) >= 2, 'the session continued as new');
      assert.deepEqual((await cas.session(id)).ignoredSignals, flooded.ignoredSignals);
    } finally {
      await cas.closeConnection();
    }
  });
});
