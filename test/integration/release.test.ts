/**
 * The release proof (issue 19): sessions on build A, some of them mid-turn, and build B whose
 * agent loop schedules one more activity before the model call (code that A's histories would
 * fail with a non-determinism error). `release promote B` lets every in-flight turn end on A,
 * moves the idle sessions at once and the busy ones when their turn ends, with no workflow task
 * failure and no message lost or doubled; `release rollback` moves them back the same way.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import type { BundleOptions, WorkerPlugin } from '@temporalio/worker';
import type { SessionClient } from '../../src/client';
import { runsOf } from '../../src/history';
import type { ReleaseStatus } from '../../src/release/release';
import type { ScriptJson } from '../../src/model-server';
import { createWorker, type SessionWorker } from '../../src/worker';
import { recordedCarriedSamples, runCli, startTestBed, type ProcessResult, temporalAddress, uniqueId, until } from '../helpers';

const POLICY = { allowParallelInProgress: true };
const API_KEY = 'sk-release-test-1a2b3c';
const SESSIONS = 50;
const MID_TURN = 10;
/**
 * How long the scripted model holds the mid-turn sessions' call: long enough to promote B and move
 * the idle sessions meanwhile, also on a 2-core machine under load (20 s was not, at a load average of 16 to 23).
 */
const HOLD_MS = 60_000;

const SCRIPT: ScriptJson = {
  conversations: [
    {
      name: 'hold',
      match: { firstUserMessage: '^Hold' },
      steps: [{ respond: { content: 'held answer', delayMs: HOLD_MS } }, { respond: { content: 'second answer' } }, { respond: { content: 'third answer' } }],
    },
    {
      name: 'idle',
      match: { firstUserMessage: '^Idle' },
      steps: [{ respond: { content: 'idle answer' } }, { respond: { content: 'second answer' } }, { respond: { content: 'third answer' } }],
    },
    { name: 'fresh', match: { firstUserMessage: '^Fresh' }, steps: [{ respond: { content: 'fresh answer' } }] },
  ],
};

/** B's one more activity, scheduled before every model call. */
const EXTRA_ACTIVITY = 'prepareModelCall';

type Bed = Awaited<ReturnType<typeof startBed>>;
let bed: Bed;
let workerB: { worker: SessionWorker; running: Promise<void> };
let temporal: Client;
let connection: Connection;
const buildA = uniqueId('A');
const buildB = uniqueId('B');

function startBed() {
  return startTestBed('release', POLICY, {
    model: { script: SCRIPT, apiKey: API_KEY },
    worker: { agent: { apiKey: () => API_KEY }, deployment: { buildId: buildA } },
  });
}

before(async () => {
  bed = await startBed();
  connection = await Connection.connect({ address: await temporalAddress() });
  temporal = new Client({ connection });
});

after(async () => {
  workerB?.worker.shutdown();
  await workerB?.running;
  await connection?.close();
  await bed?.close();
});

/**
 * A build made of today's code with `module` (a path under the checkout, without extension)
 * swapped for `changed` when its bundle is made: the new file lives in test-output/ (ignored by
 * git) so webpack resolves its packages, and its relative imports point back into the checkout.
 */
function swappedModulePlugin(module: string, changed: (source: string) => string): WorkerPlugin {
  const root = join(__dirname, '..', '..');
  const source = readFileSync(join(root, `${module}.ts`), 'utf8');
  const dir = join(root, module, '..');
  const rewritten = changed(source).replace(/from '(\.\.?\/[^']+)'/g, (_, path: string) => `from '${join(dir, path)}'`);
  mkdirSync(join(root, 'test-output'), { recursive: true });
  const file = join(mkdtempSync(join(root, 'test-output', 'release-build-')), `${module.split('/').at(-1)!}.ts`);
  writeFileSync(file, rewritten);
  const name = module.split('/').at(-1)!;
  type Hooked = (config: Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0]) => ReturnType<NonNullable<BundleOptions['webpackConfigHook']>>;
  return {
    name: `release-test.swap-${name}`,
    configureBundler(options: BundleOptions): BundleOptions {
      const previous = options.webpackConfigHook;
      const hook: Hooked = (config) => {
        const merged = previous ? previous(config) : config;
        const swap = {
          apply(compiler: { webpack: { NormalModuleReplacementPlugin: new (pattern: RegExp, replacement: string) => { apply(c: unknown): void } } }) {
            new compiler.webpack.NormalModuleReplacementPlugin(new RegExp(`[\\\\/]${name}$|^\\./${name}$`), file).apply(compiler);
          },
        };
        return { ...merged, plugins: [...(merged.plugins ?? []), swap as never] };
      };
      return { ...options, webpackConfigHook: hook };
    },
  } as WorkerPlugin;
}

/** Build B: the real agent loop with one more activity before the model call. */
function buildBPlugin(): WorkerPlugin {
  const call = 'const answer = await model.callModel(';
  return swappedModulePlugin('workflows/agent-loop', (source) => {
    assert.ok(source.includes(call), 'the agent loop calls the model where build B adds its activity');
    return source.replace(call, `await (bookkeeping as unknown as Record<string, (input: unknown) => Promise<void>>).${EXTRA_ACTIVITY}!({ sessionId });\n          ${call}`);
  });
}

async function startBuildB(): Promise<void> {
  const worker = await createWorker({
    ...POLICY,
    temporal: { address: await temporalAddress(), taskQueue: bed.taskQueue },
    agent: { baseUrl: bed.model.url, apiKey: () => API_KEY },
    deployment: { buildId: buildB },
    plugins: [buildBPlugin()],
    workerOptions: { activities: { [EXTRA_ACTIVITY]: async () => undefined } },
  });
  const running = worker.run();
  workerB = { worker, running };
  assert.deepEqual(await worker.registered(), { state: 'waiting', current: buildA, ramping: null }, 'a new build registers and waits');
}

/** The build a session's current run is pinned to. */
async function buildOf(sessionId: string): Promise<string | undefined> {
  const described = await temporal.workflow.getHandle(sessionId).describe();
  return described.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? undefined;
}

async function release(args: string[]): Promise<ProcessResult> {
  return runCli(['release', ...args], { env: { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue } });
}

async function status(): Promise<ReleaseStatus> {
  const result = await release(['status', '--json']);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as ReleaseStatus;
}

/** Every workflow task failure, and every scheduled activity's type, over all runs of a session. */
async function historyFacts(client: SessionClient, sessionId: string): Promise<{ taskFailures: number; activitiesPerRun: string[][]; userMessages: number }> {
  const runs = runsOf(await client.exportHistory(sessionId)).map((run) => run.events ?? []);
  const activitiesPerRun = runs.map((events) =>
    events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name!),
  );
  const taskFailures = runs.flat().filter((e) => e.workflowTaskFailedEventAttributes).length;
  const transcript = await client.transcript(sessionId);
  return { taskFailures, activitiesPerRun, userMessages: transcript.messages.filter((m) => m.role === 'user').length };
}

async function turnEnded(client: SessionClient, sessionId: string, turn: number): Promise<void> {
  await until(`turn ${turn} of ${sessionId} to end`, async () => {
    const snapshot = await client.session(sessionId);
    return snapshot.agent.lastTurn?.turn === turn && snapshot.agent.activity.state === 'idle' && !snapshot.turnOpen ? true : undefined;
  }, 90_000);
}

test('release promote moves 50 sessions to build B between turns, in-flight turns end on A, and rollback moves them back', { timeout: 600_000 }, async () => {
  const { client, model } = bed;
  const building = startBuildB();
  const ids = Array.from({ length: SESSIONS }, (_, i) => `${bed.taskQueue}-s${i}`);
  const held = ids.slice(0, MID_TURN);
  const idle = ids.slice(MID_TURN);

  for (const id of idle) await client.sendMessage(id, `Idle ${id}`);
  await Promise.all(idle.map((id) => turnEnded(client, id, 1)));
  for (const id of held) await client.sendMessage(id, `Hold ${id}`);
  await until('the held calls to be in flight', () => (model.requests().filter((r) => r.conversation === 'hold' && r.inFlight).length === MID_TURN ? true : undefined), 60_000);
  await building;

  const before = await status();
  assert.equal(before.current, buildA);
  assert.deepEqual(before.versions.find((v) => v.buildId === buildA)?.openSessions, SESSIONS);

  const promoted = await release(['promote', buildB]);
  assert.equal(promoted.code, 0, promoted.stderr);
  assert.match(promoted.stderr, new RegExp(`build ${buildB} accepts the carried state of \\d+ open sessions of build ${buildA}`));
  const moved = /(\d+) of (\d+) open sessions moved/.exec(promoted.stdout);
  assert.ok(moved, promoted.stdout);
  assert.equal(Number(moved[2]), SESSIONS, 'every open session of A was woken');
  assert.ok(Number(moved[1]) >= SESSIONS - MID_TURN, `the idle sessions moved at once: ${promoted.stdout}`);

  // Every idle session is on B within a minute; the held ones stay on A until their turn ends.
  await until('the idle sessions to be on B', async () => ((await Promise.all(idle.map(buildOf))).every((b) => b === buildB) ? true : undefined), 60_000);
  for (const id of held) assert.equal(await buildOf(id), buildA, `${id} is mid-turn: pinned to A`);

  // The held turns end on A (A's code: no extra activity in the run that ran them), then move.
  await Promise.all(held.map((id) => turnEnded(client, id, 1)));
  await until('the held sessions to be on B', async () => ((await Promise.all(held.map(buildOf))).every((b) => b === buildB) ? true : undefined), 60_000);
  for (const id of held) {
    assert.equal((await client.session(id)).agent.lastTurn?.answer, 'held answer');
    const facts = await historyFacts(client, id);
    assert.equal(facts.taskFailures, 0, `${id}: no WorkflowTaskFailed`);
    assert.ok(!facts.activitiesPerRun[0]!.includes(EXTRA_ACTIVITY), `${id}: its in-flight turn ran on A`);
  }

  // The next turn of every session, and every new session, runs on B's code.
  for (const id of ids) await client.sendMessage(id, `Second ${id}`);
  await Promise.all(ids.map((id) => turnEnded(client, id, 2)));
  const fresh = `${bed.taskQueue}-fresh`;
  await client.sendMessage(fresh, 'Fresh session');
  await turnEnded(client, fresh, 1);
  assert.equal(await buildOf(fresh), buildB);
  for (const id of [...ids, fresh]) {
    const facts = await historyFacts(client, id);
    assert.equal(facts.taskFailures, 0, `${id}: no WorkflowTaskFailed`);
    assert.ok(facts.activitiesPerRun.at(-1)!.includes(EXTRA_ACTIVITY), `${id}: its latest turn ran on B: ${JSON.stringify(facts.activitiesPerRun)}`);
    assert.equal(facts.userMessages, id === fresh ? 1 : 2, `${id}: every message applied once`);
  }

  const after = await status();
  assert.equal(after.current, buildB);
  assert.equal(after.versions.find((v) => v.buildId === buildA)?.openSessions, 0, 'A is drained of open sessions');
  assert.equal(after.versions.find((v) => v.buildId === buildB)?.openSessions, SESSIONS + 1);

  // Rollback: the same path back to A.
  const rolled = await release(['rollback']);
  assert.equal(rolled.code, 0, rolled.stderr);
  assert.match(rolled.stdout, new RegExp(`build ${buildA} is current \\(was ${buildB}\\): ${SESSIONS + 1} of ${SESSIONS + 1} open sessions moved`));
  await client.sendMessage(ids[0]!, 'Third message');
  await turnEnded(client, ids[0]!, 3);
  const facts = await historyFacts(client, ids[0]!);
  assert.equal(facts.taskFailures, 0);
  assert.ok(!facts.activitiesPerRun.at(-1)!.includes(EXTRA_ACTIVITY), 'after the rollback the turn ran on A');
  assert.equal((await status()).versions.find((v) => v.buildId === buildB)?.openSessions, 0);
});

test("the previous release's carried state passes the check a worker of this build runs for release promote", async () => {
  for (const [file, samples] of recordedCarriedSamples()) {
    const refusals = await temporal.workflow.execute('releaseCheck', {
      taskQueue: bed.taskQueue,
      workflowId: uniqueId('~release-check'),
      args: [samples],
      versioningOverride: { pinnedTo: { deploymentName: bed.taskQueue, buildId: buildA } },
    });
    assert.deepEqual(refusals, [], file);
  }
  const [, samples] = recordedCarriedSamples()[0]!;
  const broken = samples.map((sample) => ({ ...sample, input: { ...(sample.input as object), carried: { ...(sample.input as { carried: object }).carried, turn: -1 } } }));
  const refusals = (await temporal.workflow.execute('releaseCheck', {
    taskQueue: bed.taskQueue,
    workflowId: uniqueId('~release-check'),
    args: [broken],
    versioningOverride: { pinnedTo: { deploymentName: bed.taskQueue, buildId: buildA } },
  })) as Array<{ sessionId: string; rule: string; message: string }>;
  assert.equal(refusals.length, broken.length);
  assert.equal(refusals[0]!.rule, 'InvariantViolation');
  assert.match(refusals[0]!.message, /turn must be a non-negative integer/);
});

test('release promote refuses a build whose checks refuse a sampled session, naming the session and the rule; nothing changes', async () => {
  const { client } = bed;
  const buildC = uniqueId('C');
  // Build C's own rule: a carried list may hold no more than zero items.
  const plugin = swappedModulePlugin('src/session/carried-check', (source) => {
    const check = 'if (input.carried !== undefined) {';
    assert.ok(source.includes(check));
    return source.replace(check, `if (Array.isArray(input.carried?.todos) && input.carried.todos.length > 0) throw new InvariantViolation('the state carried into this run', 'build C takes no list');\n    ${check}`);
  });
  const worker = await createWorker({ ...POLICY, temporal: { address: await temporalAddress(), taskQueue: bed.taskQueue }, deployment: { buildId: buildC }, plugins: [plugin] });
  const running = worker.run();
  try {
    await worker.registered();
    const id = `${bed.taskQueue}-listed`;
    await client.todoWrite(id, { todos: [{ content: 'keep me', status: 'in_progress' }] });
    const current = (await status()).current;
    const refused = await release(['promote', buildC]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`build ${buildC} refuses the carried state of \\d+ of \\d+ sampled sessions? of build ${current}; nothing was changed`));
    assert.match(refused.stderr, /rule InvariantViolation: durable todo invariant broken by the state carried into this run: build C takes no list/);
    assert.equal((await status()).current, current, 'nothing changed');
    assert.equal(await buildOf(id), current);
  } finally {
    worker.shutdown();
    await running;
  }
});

test('release promote refuses a build with no worker, and names it; nothing changes', async () => {
  const refused = await release(['promote', 'no-such-build']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /build no-such-build is not a version of deployment/);
  assert.equal((await status()).current !== 'no-such-build', true);
});
