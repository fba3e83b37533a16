/**
 * `usage()` reads a subagent its parent records as closed once: later calls take its subtree's
 * usage from the client's cache, while open sessions are asked every time.
 */
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { test } from 'node:test';
import type { Client } from '@temporalio/client';
import { SessionClient } from '../../src/client';
import { BoundedMap } from '../../src/client/bounded-map';
import { NO_USAGE } from '../../src/session/agent-state';

type Child = { sessionId: string; name: string; closed: boolean };

/** A Temporal client whose `session` query answers from `sessions`, counting the queries per session. */
function stubTemporal(sessions: Record<string, { closed: boolean; calls: number; children: Child[] }>): { temporal: Client; asked: Map<string, number> } {
  const storage = new AsyncLocalStorage<{ abortSignal?: AbortSignal }>();
  const asked = new Map<string, number>();
  const connection = { options: { address: 'stub' }, callContextStorage: storage, withAbortSignal: <R>(abortSignal: AbortSignal, fn: () => Promise<R>) => storage.run({ abortSignal }, fn) };
  const workflow = {
    getHandle: (id: string) => ({
      query: async () => {
        asked.set(id, (asked.get(id) ?? 0) + 1);
        const session = sessions[id]!;
        return { sessionId: id, closed: session.closed, children: session.children, usage: { ...NO_USAGE, model_calls: session.calls, total_tokens: 10 * session.calls } };
      },
    }),
  };
  return { temporal: { connection, workflow } as unknown as Client, asked };
}

test('a closed subagent and its closed subtree are read once; the root and open subagents every time', async () => {
  const sessions = {
    root: { closed: false, calls: 1, children: [{ sessionId: 'root/done', name: 'done', closed: true }, { sessionId: 'root/busy', name: 'busy', closed: false }] },
    'root/done': { closed: true, calls: 2, children: [{ sessionId: 'root/done/leaf', name: 'leaf', closed: true }] },
    'root/done/leaf': { closed: true, calls: 3, children: [] },
    'root/busy': { closed: false, calls: 4, children: [] },
  };
  const { temporal, asked } = stubTemporal(sessions);
  const client = new SessionClient(temporal, { diagnoseAfterMs: 60_000 });
  for (let call = 0; call < 3; call++) {
    const usage = await client.usage('root');
    assert.equal(usage.session.model_calls, 1);
    assert.equal(usage.tree.model_calls, 1 + 2 + 3 + 4, `call ${call + 1}: the tree counts every session`);
    assert.equal(usage.tree.total_tokens, 100);
  }
  assert.deepEqual(Object.fromEntries(asked), { root: 3, 'root/done': 1, 'root/done/leaf': 1, 'root/busy': 3 });
});

test('a subagent the parent records as closed whose own query still says open is asked again', async () => {
  // The parent heard of the close before the child's run ended: nothing is kept until both agree.
  const sessions = {
    root: { closed: false, calls: 0, children: [{ sessionId: 'root/closing', name: 'closing', closed: true }] },
    'root/closing': { closed: false, calls: 5, children: [] },
  };
  const { temporal, asked } = stubTemporal(sessions);
  const client = new SessionClient(temporal, { diagnoseAfterMs: 60_000 });
  await client.usage('root');
  await client.usage('root');
  assert.equal(asked.get('root/closing'), 2);
});

test('the bounded map keeps the most recently used entries', () => {
  const map = new BoundedMap<string, number>(2);
  map.set('a', 1);
  map.set('b', 2);
  assert.equal(map.get('a'), 1);
  map.set('c', 3);
  assert.equal(map.get('b'), undefined, 'the least recently used went first');
  assert.equal(map.get('a'), 1);
  assert.equal(map.get('c'), 3);
  assert.equal(map.size, 2);
  assert.throws(() => new BoundedMap(0), /positive integer/);
});
