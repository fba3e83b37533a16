import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClosedTreeNodes } from '../../src/client/closed-tree-nodes';
import { foldSession, snapshotSession, type SessionEvent, type SessionSnapshot } from '../../src/session';

const AT = '2026-12-03T10:00:00.000Z';

function snapshot(id: string, events: SessionEvent[]): SessionSnapshot {
  return snapshotSession(id, foldSession(events.map((event, i) => ({ ...event, at: new Date(Date.parse(AT) + i * 1000).toISOString() }))));
}

const write = (content: string): SessionEvent => ({ type: 'todo/write', todos: [{ content, status: 'completed' }] });
const close: SessionEvent = { type: 'session/close' };

describe('closed tree nodes', () => {
  test('a closed session is kept and answered while the listing shows its version and last change', () => {
    const nodes = new ClosedTreeNodes();
    const done = snapshot('p/a', [write('step'), close]);
    nodes.remember(done);
    const kept = nodes.get('p/a', done.version, new Date(done.updatedAt!).toISOString());
    assert.deepEqual(kept, { sessionId: 'p/a', todos: done.todos, counts: done.counts, closed: true, version: done.version, updatedAt: done.updatedAt, children: [] });
  });

  test('another version or another last change misses: the session is read again', () => {
    const nodes = new ClosedTreeNodes();
    const done = snapshot('p/a', [write('step'), close]);
    nodes.remember(done);
    assert.equal(nodes.get('p/a', done.version + 1, done.updatedAt!), undefined);
    assert.equal(nodes.get('p/a', done.version, '2020-01-01T00:00:00.000Z'), undefined, 'an id reused after retention');
    assert.equal(nodes.get('p/b', done.version, done.updatedAt!), undefined);
  });

  test('an open session is never kept', () => {
    const nodes = new ClosedTreeNodes();
    const open = snapshot('p/a', [write('step')]);
    nodes.remember(open);
    assert.equal(nodes.size, 0);
    assert.equal(nodes.get('p/a', open.version, open.updatedAt!), undefined);
  });

  test('the bytes of the lists are bounded, the least recently used going first', () => {
    const sessions = ['a', 'b', 'c'].map((name) => snapshot(`p/${name}`, [write('x'.repeat(900)), close]));
    const nodes = new ClosedTreeNodes(2 * 1100);
    nodes.remember(sessions[0]!);
    nodes.remember(sessions[1]!);
    assert.ok(nodes.get('p/a', sessions[0]!.version, sessions[0]!.updatedAt!), 'a is used, so b is now the oldest');
    nodes.remember(sessions[2]!);
    assert.equal(nodes.size, 2);
    assert.equal(nodes.get('p/b', sessions[1]!.version, sessions[1]!.updatedAt!), undefined);
    assert.ok(nodes.get('p/a', sessions[0]!.version, sessions[0]!.updatedAt!));
    assert.ok(nodes.get('p/c', sessions[2]!.version, sessions[2]!.updatedAt!));
    const huge = snapshot('p/huge', [write('y'.repeat(5000)), close]);
    nodes.remember(huge);
    assert.equal(nodes.get('p/huge', huge.version, huge.updatedAt!), undefined, 'a list larger than the whole bound is not kept');
    assert.equal(nodes.size, 2);
  });
});
