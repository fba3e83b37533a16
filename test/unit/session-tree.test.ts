import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readTree, type TreeReader } from '../../src/client/session-tree';
import type { SessionListing, SessionPage } from '../../src/client/session-listing';
import type { TreeNodeSource } from '../../src/client/closed-tree-nodes';
import type { SessionSnapshot } from '../../src/session';

/** A family of sessions as a stub reader sees it: each id with its children, in spawn order. */
type Family = Record<string, string[]>;

/** A reader over `family` that counts every call it answers, as the client's would reach Temporal. */
function countingReader(family: Family) {
  const calls = { session: [] as string[], children: [] as string[][], node: [] as string[] };
  const record = (id: string): TreeNodeSource => ({
    sessionId: id,
    todos: [{ content: `work of ${id}`, status: 'in_progress' }],
    counts: { pending: 0, in_progress: 1, completed: 0 },
    closed: false,
    version: 3,
    updatedAt: '2026-12-05T00:00:00.000Z',
    children: (family[id] ?? []).map((child) => ({ sessionId: child, name: child.slice(id.length + 1) })),
  });
  const listed = (id: string, parent: string): SessionListing => ({
    id,
    status: 'running',
    parent,
    counts: { pending: 0, in_progress: 1, completed: 0 },
    version: 3,
    updatedAt: '2026-12-05T00:00:00.000Z',
    inProgressContent: [`work of ${id}`],
    subagents: (family[id] ?? []).length,
    forkedFrom: null,
  });
  const reader: TreeReader = {
    session: async (id) => {
      calls.session.push(id);
      return record(id) as unknown as SessionSnapshot;
    },
    children: async (parents, page): Promise<SessionPage> => {
      calls.children.push([...parents]);
      const all = parents.flatMap((parent) => (family[parent] ?? []).map((child) => listed(child, parent)));
      const start = page.pageToken !== undefined ? Number(page.pageToken) : 0;
      const end = page.limit !== undefined ? start + page.limit : all.length;
      return { sessions: all.slice(start, end), nextPageToken: end < all.length ? String(end) : null };
    },
    node: async (id) => {
      calls.node.push(id);
      return record(id);
    },
  };
  return { reader, calls };
}

const workers = (parent: string, count: number): string[] => Array.from({ length: count }, (_, k) => `${parent}/w${String(k).padStart(3, '0')}`);

describe('a tree from visibility', () => {
  test('the tree of 50 working subagents is the root query and one visibility call: no subagent is queried', async () => {
    const { reader, calls } = countingReader({ root: workers('root', 50) });
    const tree = await readTree(reader, 'root');
    assert.equal(tree.children.length, 50);
    assert.deepEqual(calls.session, ['root']);
    assert.deepEqual(calls.children, [['root']]);
    assert.deepEqual(calls.node, []);
    assert.ok(tree.children.every((child) => child.todos === undefined && child.inProgressContent?.[0] === `work of ${child.id}`));
  });

  test('a level below costs one more visibility call for all its parents, and only parents that spawned any are asked about', async () => {
    const family: Family = { root: ['root/a', 'root/b', 'root/c'], 'root/a': ['root/a/x'], 'root/b': ['root/b/y', 'root/b/z'] };
    const { reader, calls } = countingReader(family);
    const tree = await readTree(reader, 'root');
    assert.deepEqual(calls.children, [['root'], ['root/a', 'root/b']]);
    assert.deepEqual(calls.session, ['root']);
    assert.deepEqual(
      tree.children.map((child) => [child.id, child.children.map((c) => c.id)]),
      [
        ['root/a', ['root/a/x']],
        ['root/b', ['root/b/y', 'root/b/z']],
        ['root/c', []],
      ],
    );
  });

  test('full reads every subagent, and only then', async () => {
    const { reader, calls } = countingReader({ root: workers('root', 5) });
    const tree = await readTree(reader, 'root', { full: true });
    assert.deepEqual(calls.node, workers('root', 5));
    assert.ok(tree.children.every((child) => child.todos !== undefined));
  });

  test('a paged tree of 500 reads one page of subagents, whatever the number behind it', async () => {
    const { reader, calls } = countingReader({ root: workers('root', 500) });
    const first = await readTree(reader, 'root', { limit: 50 });
    assert.equal(first.children.length, 50);
    assert.deepEqual(calls.children, [['root']]);
    assert.deepEqual(calls.session, ['root']);
    let token = first.nextPageToken ?? undefined;
    const seen = new Set(first.children.map((child) => child.id));
    while (token !== undefined) {
      const page = await readTree(reader, 'root', { limit: 50, pageToken: token });
      for (const child of page.children) seen.add(child.id);
      token = page.nextPageToken ?? undefined;
    }
    assert.equal(seen.size, 500, 'every subagent once over the pages');
  });

  test('a subagent the root records but visibility does not show yet is read from the session', async () => {
    const { reader, calls } = countingReader({ root: ['root/seen'] });
    const children = reader.children.bind(reader);
    reader.children = async (parents, page) => ({ ...(await children(parents, page)), sessions: [] });
    const tree = await readTree(reader, 'root');
    assert.deepEqual(tree.children.map((child) => child.id), ['root/seen']);
    assert.deepEqual(calls.node, ['root/seen']);
  });

  test('a bad limit is refused with the rule before anything is read', async () => {
    const { reader, calls } = countingReader({ root: [] });
    await assert.rejects(readTree(reader, 'root', { limit: 0 }), /limit must be an integer from 1 to 1000/);
    await assert.rejects(readTree(reader, 'root', { limit: 1.5 }), /limit must be an integer/);
    assert.deepEqual([calls.session, calls.children], [[], []]);
  });
});
