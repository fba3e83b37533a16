import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { countAcceptedUpdates, runCli, spawnCli, uniqueId } from '../helpers';

const taskQueue = uniqueId('cli-test');
const env = { AGENT_SESSIONS_TASK_QUEUE: taskQueue };
const cli = (...args: string[]) => runCli(args, { env });
let worker: Awaited<ReturnType<typeof spawnCli>>;

before(async () => {
  worker = await spawnCli(['worker', '--allow-parallel-in-progress', 'false'], env);
  const deadline = Date.now() + 60_000;
  while (!worker.output().includes('worker polling')) {
    if (Date.now() > deadline) throw new Error(`the worker did not start: ${worker.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

after(async () => {
  worker.child.kill('SIGTERM');
  assert.equal(await worker.exited, 0, 'the worker stops cleanly on SIGTERM');
});

describe('agent-sessions CLI', () => {
  test('a session driven through every command, as the contract writes them', async () => {
    const id = uniqueId('cli');
    const list = { todos: [{ content: 'Run lint', status: 'completed' }, { content: 'Fix errors', status: 'in_progress' }, { content: 'Re-run', status: 'pending' }] };

    assert.equal((await cli('start', id)).code, 0);
    const again = await cli('start', id);
    assert.equal(again.code, 0, 'starting a running session succeeds');

    assert.equal((await cli('turn-start', id)).code, 0);
    const write = await cli('write', id, '--json', JSON.stringify(list));
    assert.equal(write.code, 0, write.stderr);
    assert.equal(write.stdout.trim(), 'Updated todo list: 1 pending, 1 in progress, 1 completed');

    const fromStdin = await runCli(['write', id], { env, input: JSON.stringify({ todos: [...list.todos, { content: 'Ship', status: 'pending' }] }) });
    assert.equal(fromStdin.stdout.trim(), 'Updated todo list: 2 pending, 1 in progress, 1 completed');

    const json = await cli('todos', id, '--json');
    assert.deepEqual(JSON.parse(json.stdout), [...list.todos, { content: 'Ship', status: 'pending' }]);
    const text = await cli('todos', id);
    assert.match(text.stdout, /\[x\] Run lint\n\[>\] Fix errors\n\[ \] Re-run\n\[ \] Ship/);

    assert.equal((await cli('turn-end', id)).code, 0);
    assert.equal(JSON.parse((await cli('todos', id, '--json')).stdout).length, 4, 'turn-end keeps the list');
    assert.equal((await cli('turn-start', id)).code, 0);
    assert.equal((await cli('todos', id, '--json')).stdout.trim(), 'null');

    const dir = mkdtempSync(join(tmpdir(), 'cli-history-'));
    const out = join(dir, 'history.json');
    assert.equal((await cli('close', id)).code, 0);
    assert.equal((await cli('history', id, '--out', out)).code, 0);
    const history = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(countAcceptedUpdates(history), 2);
    const printed = await cli('history', id);
    assert.deepEqual(JSON.parse(printed.stdout), history);

    for (const policy of ['true', 'false']) {
      const byId = await cli('replay', id, '--allow-parallel-in-progress', policy);
      assert.equal(byId.code, 0, byId.stderr);
      assert.equal(byId.stdout.trim(), 'null', 'the session ended in a fresh turn with no list');
      const byFile = await cli('replay', '--file', out, '--allow-parallel-in-progress', policy);
      assert.equal(byFile.code, 0, byFile.stderr);
      assert.equal(byFile.stdout.trim(), 'null');
    }
    const closedWrite = await cli('write', id, '--json', '{"todos":[]}');
    assert.equal(closedWrite.code, 1);
    assert.match(closedWrite.stderr, /is closed/);
  });

  test('a rejected write prints the rule to stderr without a stack trace and exits 1', async () => {
    const id = uniqueId('cli-reject');
    await cli('start', id);
    const rejected = await cli('write', id, '--json', JSON.stringify({ todos: [{ content: 'a', status: 'in_progress' }, { content: 'b', status: 'in_progress' }] }));
    assert.equal(rejected.code, 1);
    assert.equal(rejected.stdout, '');
    assert.match(rejected.stderr, /at most one todo may be in_progress at a time .*\(got 2/);
    assert.doesNotMatch(rejected.stderr, /\n\s+at /, 'no stack trace');

    const extra = await cli('write', id, '--json', JSON.stringify({ todos: [{ content: 'a', status: 'pending', priority: 'high' }] }));
    assert.equal(extra.code, 1);
    assert.match(extra.stderr, /todos\[0\] has an unknown property "priority"/);

    const malformed = await cli('write', id, '--json', '{"todos": [');
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, /not valid JSON/);
    assert.equal(JSON.parse((await cli('todos', id, '--json')).stdout), null, 'nothing was written');
  });

  test('commands on an unknown session fail with a sentence naming it', async () => {
    const result = await cli('todos', 'no-such-session-anywhere');
    assert.equal(result.code, 1);
    assert.match(result.stderr, /no session "no-such-session-anywhere"/);
  });

  test('replay of a hand-broken history exits non-zero naming the invariant and the event', async () => {
    const file = join(__dirname, '..', 'histories', 'broken-repeated.json');
    const result = await cli('replay', '--file', file, '--allow-parallel-in-progress', 'true');
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /invariant broken by todo\/write at event \d+: todos\[1\]\.content repeats/);
  });

  test('the worker and replay refuse to run without a policy: exit 2 naming the setting', async () => {
    for (const args of [['worker'], ['replay', 'x'], ['worker', '--allow-parallel-in-progress', 'maybe']]) {
      const result = await runCli(args, { env: { ...env, ALLOW_PARALLEL_IN_PROGRESS: '' } });
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /allowParallelInProgress|--allow-parallel-in-progress must be true or false/);
    }
  });

  test('the worker takes its policy from ALLOW_PARALLEL_IN_PROGRESS too', async () => {
    const other = await spawnCli(['worker'], { AGENT_SESSIONS_TASK_QUEUE: uniqueId('env-policy'), ALLOW_PARALLEL_IN_PROGRESS: 'true' });
    const deadline = Date.now() + 60_000;
    while (!other.output().includes('allowParallelInProgress=true') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    other.child.kill('SIGTERM');
    assert.equal(await other.exited, 0);
    assert.match(other.output(), /allowParallelInProgress=true/);
  });
});
