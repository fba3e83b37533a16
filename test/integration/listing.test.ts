import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { InvalidInputError } from '../../src/client';
import { httpCall, runCli, startWorker, todo, uniqueId, useTestBed } from '../helpers';

// A task queue of its own: the listing sees only this file's sessions.
const bed = useTestBed('listing', { allowParallelInProgress: true }, { http: {} });
const parent = uniqueId('lister');
const ids: string[] = [];

async function settled(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail('visibility did not catch up');
}

before(async () => {
  await bed.ready;
  await bed.client.todoWrite(parent, { todos: [todo('Delegate', 'in_progress')] });
  for (const name of ['a', 'b', 'c']) ids.push((await bed.client.spawnSubagent(parent, { name })).sessionId);
  await bed.client.todoWrite(ids[0]!, { todos: [todo('Work', 'in_progress'), todo('Then this')] });
  await bed.client.todoWrite(ids[1]!, { todos: [todo('Done', 'completed')] });
  await bed.client.close(ids[2]!);
  // Visibility lags the sessions: wait until it shows every write and the close.
  await settled(async () => {
    const listed = await bed.client.list();
    const open = await bed.client.list({ open: true, parent });
    return listed.filter((s) => s.version !== null && s.version > 0).length === 4 && open.length === 2;
  });
});

test('the listing comes from search attributes: counts, version, parent and status of every session, no session queried', async () => {
  const listed = new Map((await bed.client.list()).map((s) => [s.id, s]));
  assert.deepEqual(listed.get(ids[0]!)?.counts, { pending: 1, in_progress: 1, completed: 0 });
  assert.equal(listed.get(ids[0]!)?.parent, parent);
  assert.equal(listed.get(ids[2]!)?.status, 'closed');
  assert.equal(listed.get(parent)?.parent, null);
  // With the worker gone no session can answer a query; the listing does not need one.
  await bed.worker.stop();
  try {
    const again = await bed.client.list();
    assert.deepEqual(again.find((s) => s.id === ids[0])?.counts, { pending: 1, in_progress: 1, completed: 0 });
  } finally {
    bed.worker = await startWorker({ allowParallelInProgress: true }, bed.taskQueue);
  }
});

test('filters: open, the subagents of a parent, work in progress', async () => {
  assert.deepEqual((await bed.client.list({ parent })).map((s) => s.id).sort(), [...ids].sort());
  assert.deepEqual((await bed.client.list({ open: true, parent })).map((s) => s.id).sort(), [ids[0], ids[1]].sort());
  assert.deepEqual((await bed.client.list({ inProgress: true })).map((s) => s.id).sort(), [parent, ids[0]].sort());
});

test('pages: limit, a next-page token, and every session exactly once', async () => {
  const seen: string[] = [];
  let token: string | undefined;
  for (let pages = 0; pages < 10; pages++) {
    const page = await bed.client.listPage({ limit: 1, ...(token !== undefined ? { pageToken: token } : {}) });
    assert.ok(page.sessions.length <= 1);
    seen.push(...page.sessions.map((s) => s.id));
    if (page.nextPageToken === null) break;
    token = page.nextPageToken;
  }
  assert.deepEqual([...seen].sort(), [parent, ...ids].sort());
  await assert.rejects(bed.client.listPage({ limit: 1, pageToken: 'not-a-token' }), InvalidInputError);
});

test('the CLI lists with the same filters, and with --limit prints the page and its token', async () => {
  const env = { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue };
  const children = await runCli(['list', '--parent', parent, '--json'], { env });
  assert.equal(children.code, 0, children.stderr);
  assert.deepEqual((JSON.parse(children.stdout) as Array<{ id: string }>).map((s) => s.id).sort(), [...ids].sort());
  const page = await runCli(['list', '--limit', '2', '--json'], { env });
  const parsed = JSON.parse(page.stdout) as { sessions: unknown[]; nextPageToken: string | null };
  assert.equal(parsed.sessions.length, 2);
  assert.equal(typeof parsed.nextPageToken, 'string');
  const rest = await runCli(['list', '--limit', '10', '--page-token', parsed.nextPageToken!, '--json'], { env });
  assert.equal((JSON.parse(rest.stdout) as { sessions: unknown[] }).sessions.length, 2);
  const bad = await runCli(['list', '--limit', '0'], { env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--limit must be an integer from 1 to 1000/);
});

test('GET /sessions answers one page with the next-page token in X-Next-Page-Token, and the filters', async () => {
  const first = await httpCall(bed.http.url, 'GET', '/sessions?limit=3');
  assert.equal(first.status, 200);
  assert.equal(first.json.length, 3);
  const token = first.headers.get('x-next-page-token');
  assert.ok(token);
  const second = await httpCall(bed.http.url, 'GET', `/sessions?limit=3&pageToken=${encodeURIComponent(token)}`);
  assert.equal(second.json.length, 1);
  assert.equal(second.headers.get('x-next-page-token'), null);
  const inProgress = await httpCall(bed.http.url, 'GET', `/sessions?inProgress=true&parent=${encodeURIComponent(parent)}`);
  assert.deepEqual(inProgress.json.map((s: { id: string }) => s.id), [ids[0]]);
  const bad = await httpCall(bed.http.url, 'GET', '/sessions?pageToken=garbage');
  assert.equal(bad.status, 400);
});

test('a tree finds each level with the parent search attribute, in spawn order', async () => {
  const tree = await bed.client.tree(parent);
  assert.deepEqual(tree.children.map((child) => child.name), ['a', 'b', 'c']);
  assert.deepEqual(tree.children[0]?.counts, { pending: 1, in_progress: 1, completed: 0 });
});

/** Counts the visibility calls `action` makes through the client's connection. */
async function visibilityCalls<T>(action: () => Promise<T>): Promise<{ calls: number; value: T }> {
  const service = bed.client.temporal.connection.workflowService;
  const list = service.listWorkflowExecutions;
  let calls = 0;
  service.listWorkflowExecutions = ((...args: Parameters<typeof list>) => {
    calls++;
    return list.apply(service, args);
  }) as typeof list;
  try {
    return { value: await action(), calls };
  } finally {
    service.listWorkflowExecutions = list;
  }
}

test('a tree is one visibility call plus the root, paged or not', async () => {
  const whole = await visibilityCalls(() => bed.client.tree(parent));
  assert.equal(whole.calls, 1, 'none of the subagents has subagents: no second level is asked for');
  assert.deepEqual(whole.value.nextPageToken, null);
  const page = await visibilityCalls(() => bed.client.tree(parent, { limit: 2 }));
  assert.equal(page.calls, 1);
  assert.equal(page.value.children.length, 2);
});

test('a tree pages its subagents with a limit and a next-page token, each subagent exactly once', async () => {
  const seen: string[] = [];
  let token: string | undefined;
  for (let pages = 0; pages < 10; pages++) {
    const tree = await bed.client.tree(parent, { limit: 2, ...(token !== undefined ? { pageToken: token } : {}) });
    assert.deepEqual(tree.todos, [todo('Delegate', 'in_progress')], 'every page carries the root');
    assert.ok(tree.children.length <= 2);
    seen.push(...tree.children.map((child) => child.id));
    if (tree.nextPageToken === null || tree.nextPageToken === undefined) break;
    token = tree.nextPageToken;
  }
  assert.deepEqual([...seen].sort(), [...ids].sort());
  const full = await bed.client.tree(parent, { limit: 3, full: true });
  assert.deepEqual(full.children.find((child) => child.id === ids[0])?.todos, [todo('Work', 'in_progress'), todo('Then this')]);
});

test('a bad limit or page token of a tree is refused with the rule it breaks', async () => {
  for (const limit of [0, 1001, 2.5]) {
    await assert.rejects(bed.client.tree(parent, { limit }), (error: unknown) => {
      assert.ok(error instanceof InvalidInputError);
      assert.match(error.message, new RegExp(`^limit must be an integer from 1 to 1000 \\(subagents per page\\), got ${limit}$`));
      return true;
    });
  }
  await assert.rejects(bed.client.tree(parent, { pageToken: 'garbage' }), /^InvalidInputError: the page token "garbage" is not one a tree gave; start again without it$/);
  const listingToken = (await bed.client.listPage({ limit: 1 })).nextPageToken!;
  await assert.rejects(bed.client.tree(parent, { pageToken: listingToken }), /the page token ".*" belongs to another session's tree; start again without it/);
  const otherToken = (await bed.client.tree(parent, { limit: 1 })).nextPageToken!;
  await assert.rejects(bed.client.tree(ids[0]!, { pageToken: otherToken }), /belongs to another session's tree/);
});

test('the CLI pages a tree with --limit and --page-token, reads lists with --full, and refuses a bad limit or token', async () => {
  const env = { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue };
  const first = await runCli(['tree', parent, '--limit', '2', '--json'], { env });
  assert.equal(first.code, 0, first.stderr);
  const page = JSON.parse(first.stdout) as { children: Array<{ id: string; todos?: unknown }>; nextPageToken: string | null };
  assert.equal(page.children.length, 2);
  assert.ok(page.children.every((child) => !('todos' in child)), 'summarized: no list');
  assert.equal(typeof page.nextPageToken, 'string');
  const rest = await runCli(['tree', parent, '--limit', '2', '--page-token', page.nextPageToken!, '--full', '--json'], { env });
  assert.equal(rest.code, 0, rest.stderr);
  const last = JSON.parse(rest.stdout) as { children: Array<{ id: string; todos?: unknown }>; nextPageToken: string | null };
  assert.equal(last.nextPageToken, null);
  assert.deepEqual([...page.children, ...last.children].map((child) => child.id).sort(), [...ids].sort());
  assert.ok(last.children.every((child) => 'todos' in child), '--full: every list read');
  const text = await runCli(['tree', parent, '--limit', '2'], { env });
  assert.match(text.stderr, new RegExp(`more: agent-sessions tree ${parent} --limit 2 --page-token p1\\.\\S+\\n`));
  const badLimit = await runCli(['tree', parent, '--limit', '0'], { env });
  assert.equal(badLimit.code, 2);
  assert.match(badLimit.stderr, /--limit must be an integer from 1 to 1000, got "0"/);
  const badToken = await runCli(['tree', parent, '--page-token', 'garbage'], { env });
  assert.equal(badToken.code, 1);
  assert.match(badToken.stderr, /^agent-sessions: the page token "garbage" is not one a tree gave; start again without it$/m);
});

test('GET /sessions/{id}/tree pages with ?limit= and ?pageToken= (nextPageToken in the JSON), reads lists with ?full=true, and refuses bad values', async () => {
  const path = `/sessions/${encodeURIComponent(parent)}/tree`;
  const first = await httpCall(bed.http.url, 'GET', `${path}?limit=2`);
  assert.equal(first.status, 200);
  assert.equal(first.json.children.length, 2);
  assert.equal(typeof first.json.nextPageToken, 'string');
  const second = await httpCall(bed.http.url, 'GET', `${path}?limit=2&full=true&pageToken=${encodeURIComponent(first.json.nextPageToken)}`);
  assert.equal(second.status, 200);
  assert.equal(second.json.nextPageToken, null);
  assert.ok(second.json.children.every((child: { todos?: unknown }) => child.todos !== undefined));
  for (const query of ['limit=0', 'limit=1001', 'limit=two', 'full=yes', 'pageToken=']) {
    const bad = await httpCall(bed.http.url, 'GET', `${path}?${query}`);
    assert.equal(bad.status, 400, query);
    assert.equal(bad.json.code, 'invalid-input');
    assert.match(bad.json.error, /^the query must be \?full=true\|false, \?limit=<an integer from 1 to 1000> and \?pageToken=<the nextPageToken of the previous page>, each optional$/);
  }
  const garbage = await httpCall(bed.http.url, 'GET', `${path}?pageToken=garbage`);
  assert.equal(garbage.status, 400);
  assert.deepEqual(garbage.json, { error: 'the page token "garbage" is not one a tree gave; start again without it', code: 'invalid-input' });
});
