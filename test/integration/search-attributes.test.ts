import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidSettingError } from '../../src/client';
import { loggedSignals } from '../../src/history';
import { SESSION_SEARCH_ATTRIBUTES } from '../../src/session';
import { createWorker } from '../../src/worker';
import { runTemporalCli, temporalAddress, todo, uniqueId, useTestBed } from '../helpers';

const bed = useTestBed('indexed', { allowParallelInProgress: true });

/** The session's search attributes as visibility reports them, once it has caught up. */
async function indexed(id: string, version: number): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const description = await bed.client.temporal.workflow.getHandle(id).describe();
    const found = Object.fromEntries(description.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]));
    if (found.AgentSessionVersion === version) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`session ${id} never indexed version ${version}`);
}

test("a session's search attributes follow its state: counts, the todos in progress, version, last update, closed, subagents, and a subagent's parent", async () => {
  const id = uniqueId('indexed');
  await bed.client.todoWrite(id, { todos: [todo('A', 'completed'), todo('B', 'in_progress'), todo('C'), todo('D')] });
  let found = await indexed(id, 1);
  assert.equal(found.AgentSessionPending, 2);
  assert.equal(found.AgentSessionInProgress, 1);
  assert.equal(found.AgentSessionCompleted, 1);
  assert.deepEqual(found.AgentSessionInProgressContent, ['B']);
  assert.equal(found.AgentSessionSubagents, 0);
  assert.equal(found.AgentSessionClosed, false);
  assert.ok(found.AgentSessionUpdatedAt instanceof Date);
  assert.equal(found.AgentSessionParent, undefined);
  await bed.client.spawnSubagent(id, { name: 'child' });
  const child = await indexed(`${id}/child`, 0);
  assert.equal(child.AgentSessionParent, id);
  assert.equal(child.AgentSessionInProgressContent, undefined, 'an empty list is no attribute');
  assert.equal((await indexed(id, 2)).AgentSessionSubagents, 1);
  await bed.client.todoWrite(id, { todos: [todo('A', 'completed'), todo('B', 'completed')] });
  assert.equal((await indexed(id, 3)).AgentSessionInProgressContent, undefined, 'the last todo in progress done, the attribute goes');
  await bed.client.close(id);
  found = await indexed(id, 5);
  assert.equal(found.AgentSessionClosed, true);
  assert.deepEqual(loggedSignals(await bed.client.exportHistory(id)).map((s) => s.name), ['subagent/closed']);
});

test("a new session's first write makes one patch marker and indexes the session once in its first workflow task, with the write in it", async () => {
  const id = uniqueId('indexed-once');
  await bed.client.todoWrite(id, { todos: [todo('A', 'completed'), todo('B', 'in_progress')] });
  const [run] = await bed.client.historyRuns(id);
  const events = run!.history.events ?? [];
  const firstTaskEnd = events.findIndex((event) => event.workflowTaskCompletedEventAttributes != null);
  const secondTask = events.findIndex((event, at) => at > firstTaskEnd && event.workflowTaskScheduledEventAttributes != null);
  const firstTask = events.slice(firstTaskEnd, secondTask < 0 ? undefined : secondTask);
  assert.equal(firstTask.filter((event) => event.markerRecordedEventAttributes != null).length, 1, 'one patch marker');
  // The SDK upserts TemporalChangeVersion with each patch marker; the session's own upserts carry its attributes.
  const upserts = firstTask.filter((event) =>
    Object.keys(event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).some((name) => name in SESSION_SEARCH_ATTRIBUTES),
  );
  assert.equal(upserts.length, 1, 'one upsert of the session attributes');
  const last = events.findIndex((event) => event.workflowExecutionUpdateCompletedEventAttributes != null);
  assert.ok(events.indexOf(upserts[0]!) > last, 'the upsert comes after the write it indexes');
  const found = await indexed(id, 1);
  assert.equal(found.AgentSessionInProgress, 1);
  assert.equal(found.AgentSessionCompleted, 1);
  assert.equal(found.AgentSessionClosed, false);
  await bed.client.close(id);
});

test('a worker pointed at a namespace that lacks the attributes refuses to start, naming each and how to add it', async () => {
  const namespace = uniqueId('bare');
  const created = await runTemporalCli(['operator', 'namespace', 'create', '--namespace', namespace]);
  assert.equal(created.code, 0, created.stderr);
  await assert.rejects(
    createWorker({ allowParallelInProgress: true, temporal: { address: await temporalAddress(), namespace, taskQueue: uniqueId('bare') } }),
    (error: unknown) => {
      assert.ok(error instanceof InvalidSettingError, String(error));
      for (const [name, type] of Object.entries(SESSION_SEARCH_ATTRIBUTES)) {
        assert.ok(error.message.includes(`${name} (${type})`), `${name} named`);
        assert.ok(error.message.includes(`temporal operator search-attribute create --namespace ${namespace} --name ${name} --type ${type}`), `how to add ${name}`);
      }
      return true;
    },
  );
});
