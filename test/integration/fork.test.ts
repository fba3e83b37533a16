import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import {
  InvalidInputError,
  InvalidSessionIdError,
  NoWorkerError,
  SessionExistsError,
  SessionNotFoundError,
  type ForkAt,
  type ForkResult,
  type SessionClient,
} from '../../src/client';
import type { ExportedHistory } from '../../src/history';
import type { ScriptJson } from '../../src/model-server';
import type { ChatMessage, SessionSnapshot } from '../../src/session';
import type { Transcript } from '../../workflows/messages';
import { assertRejected, connectClient, httpCall, replaySession, runCli, startTestBed, todo, uniqueId, until, useTestBed } from '../helpers';

const PARALLEL = { allowParallelInProgress: true };
const SERIAL = { allowParallelInProgress: false };

const list = (...items: Array<[string, 'pending' | 'in_progress' | 'completed']>) => ({ todos: items.map(([content, status]) => todo(content, status)) });
const write = (...items: Array<[string, 'pending' | 'in_progress' | 'completed']>) => ({ respond: { tool_calls: [{ name: 'todo_write', arguments: list(...items) }] } });
const say = (content: string) => ({ respond: { content } });

/**
 * One conversation for every session of this file: the model answers by the number of its own
 * messages already in the conversation, so a fork taken anywhere goes on where it stands. Four
 * turns (a plan, a tag, a publication, a release), then what any continuation does: a list with
 * two todos in progress (which only the parallel policy accepts), then an answer.
 */
const SCRIPT: ScriptJson = {
  model: 'scripted-release',
  conversations: [
    {
      name: 'release',
      match: { firstUserMessage: '.' },
      steps: [
        write(['Draft notes', 'pending'], ['Tag', 'pending'], ['Publish', 'pending']),
        write(['Draft notes', 'in_progress'], ['Tag', 'pending'], ['Publish', 'pending']),
        say('Planned.'),
        write(['Draft notes', 'completed'], ['Tag', 'in_progress'], ['Publish', 'pending']),
        say('Tagged.'),
        write(['Draft notes', 'completed'], ['Tag', 'completed'], ['Publish', 'in_progress']),
        say('Publishing.'),
        write(['Draft notes', 'completed'], ['Tag', 'completed'], ['Publish', 'completed']),
        say('Released.'),
        ...Array.from({ length: 8 }, () => [write(['Announce', 'in_progress'], ['Update the site', 'in_progress']), say('Continued.')]).flat(),
      ],
    },
  ],
};
const TURNS = ['Plan the release', 'Tag it', 'Publish it', 'Release it'];

// Ten applied events per run: the four turns (4, 3, 3 and 3 events) make the session continue
// as new after its third turn, so its history has two runs.
const bed = useTestBed('fork', PARALLEL, {
  model: { script: SCRIPT },
  worker: { agent: { nudge: false } },
  client: { continueAsNewAfter: 10 },
  http: {},
});

/** Sends a message and waits for its turn to end; answers the session then. */
async function chat(client: SessionClient, sessionId: string, text: string): Promise<SessionSnapshot> {
  const { messageId } = await client.sendMessage(sessionId, text);
  return until(
    `the turn of message ${messageId} of ${sessionId}`,
    async () => {
      const s = await client.session(sessionId);
      return s.agent.lastTurn?.messageId === messageId && s.agent.activity.state === 'idle' && !s.turnOpen ? s : undefined;
    },
    60_000,
  );
}

/** What the live session answered right after a turn ended, and the event its history ended at then. */
interface LivePoint {
  runId: string;
  eventId: number;
  transcript: Transcript;
  session: SessionSnapshot;
}

/** The session the forks are taken from: four turns over two runs. */
const source = { id: uniqueId('release'), live: [] as LivePoint[], history: undefined as ExportedHistory | undefined };

before(async () => {
  await bed.ready;
  const { client } = bed;
  for (const text of TURNS) {
    const session = await chat(client, source.id, text);
    const runs = await client.historyRuns(source.id);
    const current = runs.at(-1)!;
    source.live.push({ runId: current.runId, eventId: current.history.events!.length, transcript: await client.transcript(source.id), session });
  }
  source.history = await client.exportHistory(source.id);
});

/** The synthetic result a fork gives a call that had none yet at its fork point. */
const CUT_RESULT = /^no result: the session was forked from "[^"]+" at event \d+ of run [^ ]+ before this call returned$/;

/** Messages of a fork's transcript, less the results it made up for calls cut at the fork point. */
function ownMessages(messages: ChatMessage[]): ChatMessage[] {
  let end = messages.length;
  while (end > 0 && messages[end - 1]!.role === 'tool' && CUT_RESULT.test(messages[end - 1]!.content ?? '')) end--;
  return messages.slice(0, end);
}

/** Runs `work` on every item, at most `limit` at a time, in order of starting. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index]!, index);
      }
    }),
  );
}

/** A timeline step as `GET /sessions/{id}/timeline` shows it. */
interface Step {
  eventId: number;
  run: number;
  runId: string;
  todos: unknown;
  version: number;
  turn: number;
  turnOpen: boolean;
}

describe('a fork at any event', () => {
  test('a fork at every event of a multi-turn, continued-as-new history starts from the list, turn and version the timeline shows there and from the transcript the session had', async () => {
    const { client, http } = bed;
    const runs = await client.historyRuns(source.id);
    assert.ok(runs.length >= 2, `the source continued as new (${runs.length} runs)`);
    const steps = (await httpCall(http.url, 'GET', `/sessions/${source.id}/timeline`)).json.steps as Step[];
    const final = await client.transcript(source.id);
    const points = runs.flatMap((run, index) => run.history.events!.map((_, e) => ({ run: index + 1, runId: run.runId, eventId: e + 1 })));
    const seen: Array<{ messages: number; calls: number }> = [];
    await eachLimited(points, 4, async (point, index) => {
      const newId = uniqueId('at');
      const forked = await client.fork(source.id, newId, { eventId: point.eventId, runId: point.runId });
      const where = `event ${point.eventId} of run ${point.run}`;
      assert.deepEqual(forked.forkedFrom, { id: source.id, runId: point.runId, eventId: point.eventId }, where);
      // What the timeline shows at that event: its last step at or before it (the run before's
      // last one, at a run's start), or the empty session before its first event.
      const shown = steps.filter((s) => s.run < point.run || (s.run === point.run && s.eventId <= point.eventId)).at(-1) ?? { todos: null, turn: 0, version: 0, turnOpen: false };
      const s = forked.session;
      assert.deepEqual([s.todos, s.turn, s.version], [shown.todos, shown.turn, shown.version], where);
      assert.deepEqual([s.turnOpen, s.closed, s.children, s.forkedFrom], [false, false, [], forked.forkedFrom], where);
      assert.deepEqual(await client.todos(newId), shown.todos, where);
      const transcript = await client.transcript(newId);
      const own = ownMessages(transcript.messages);
      assert.deepEqual(own, final.messages.slice(0, own.length), `${where}: the transcript is the source's as far as it went`);
      const calls = own.filter((m) => m.role === 'assistant').length;
      assert.equal(transcript.usage.model_calls, calls, `${where}: the usage is that of the model calls in the transcript`);
      if (transcript.messages.length > own.length) assert.ok(shown.turnOpen, `${where}: only a turn cut by the fork gets results made up for its calls`);
      if (shown.turnOpen && s.agent.lastTurn?.turn === shown.turn) {
        assert.equal(s.agent.lastTurn.reason, 'interrupted', where);
        assert.match(s.agent.lastTurn.detail ?? '', new RegExp(`forked from "${source.id}" at event ${point.eventId} of run ${point.runId}, during this turn`));
      }
      seen[index] = { messages: own.length, calls };
    });
    for (let i = 1; i < seen.length; i++) {
      assert.ok(seen[i]!.messages >= seen[i - 1]!.messages, `the transcript never shrinks from one event to the next (${JSON.stringify(points[i])})`);
    }
    assert.equal(seen.at(-1)!.messages, final.messages.length, 'the fork at the newest event has the whole transcript');
  });

  test('a fork where a turn had just ended has exactly the transcript, usage and last turn the live session answered then', async () => {
    const { client } = bed;
    for (const [index, live] of source.live.entries()) {
      const newId = uniqueId(`after-turn-${index + 1}`);
      await client.fork(source.id, newId, { eventId: live.eventId, runId: live.runId });
      const transcript = await client.transcript(newId);
      assert.deepEqual({ ...transcript, sessionId: source.id }, live.transcript, `after turn ${index + 1}`);
      const s = await client.session(newId);
      assert.deepEqual([s.turn, s.todos, s.version, s.usage, s.agent.lastTurn], [live.session.turn, live.session.todos, live.session.version, live.session.usage, live.session.agent.lastTurn]);
    }
  });

  test('--before-turn N forks at the state just before turn N began, and the next chat continues from there', async () => {
    const { client } = bed;
    const newId = uniqueId('before-2');
    const forked = await client.fork(source.id, newId, { beforeTurn: 2 });
    const afterFirst = source.live[0]!;
    assert.equal(forked.session.turn, 1);
    assert.deepEqual((await client.transcript(newId)).messages, afterFirst.transcript.messages);
    const steps = (await client.historyRuns(source.id))[0]!.history.events!;
    const turnStart = steps[forked.forkedFrom.eventId]!; // the event right after the fork point
    assert.equal(turnStart.workflowExecutionSignaledEventAttributes?.signalName, 'turn/start', 'the fork point is the event before turn 2 began');

    // The model sees turn 1 and nothing after it: it answers as it answered turn 2.
    const next = await chat(client, newId, 'Tag it');
    assert.equal(next.agent.lastTurn?.answer, 'Tagged.');
    assert.equal(next.turn, 2);
    assert.deepEqual(next.todos, list(['Draft notes', 'completed'], ['Tag', 'in_progress'], ['Publish', 'pending']).todos);

    const empty = await client.fork(source.id, uniqueId('before-1'), { beforeTurn: 1 });
    assert.deepEqual([empty.session.turn, empty.session.todos, empty.session.usage.model_calls], [0, null, 0]);
  });

  test('a fork in the middle of a turn ends that turn as interrupted, answers its cut calls, and goes on with the next message', async () => {
    const { client, http } = bed;
    const steps = (await httpCall(http.url, 'GET', `/sessions/${source.id}/timeline`)).json.steps as Array<Step & { type: string }>;
    // The first write of turn 2: the model asked for it, the session applied it, its result had not come back.
    const write = steps.find((s) => s.type === 'todo/write' && s.turn === 2)!;
    const newId = uniqueId('mid-turn');
    const forked = await client.fork(source.id, newId, { eventId: write.eventId, runId: write.runId });
    const last = forked.session.agent.lastTurn!;
    assert.deepEqual([last.turn, last.reason, forked.session.turnOpen], [2, 'interrupted', false]);
    const { messages } = await client.transcript(newId);
    const cut = messages.at(-1)!;
    assert.equal(cut.role, 'tool');
    assert.match(cut.content ?? '', CUT_RESULT);
    assert.deepEqual(forked.session.todos, write.todos, 'the list is the one that write made');

    const next = await chat(client, newId, 'Go on');
    assert.equal(next.agent.lastTurn?.reason, 'completed');
    assert.equal(next.turn, 3);
  });

  test('without --at the fork is at the newest event, and a closed session can be forked', async () => {
    const { client } = bed;
    const closed = uniqueId('closed-source');
    await chat(client, closed, 'Plan the release');
    await client.close(closed);
    const runs = await client.historyRuns(closed);
    const forked = await client.fork(closed, uniqueId('of-closed'));
    assert.deepEqual(forked.forkedFrom, { id: closed, runId: runs.at(-1)!.runId, eventId: runs.at(-1)!.history.events!.length });
    assert.equal(forked.session.closed, false);
    assert.deepEqual(forked.session.todos, (await client.session(closed)).todos);
    const next = await chat(client, forked.sessionId, 'Tag it');
    assert.equal(next.agent.lastTurn?.answer, 'Tagged.');
  });
});

describe('a fork continues under either policy', () => {
  test('forks of the same point go on under a parallel and a serial worker, each judging the new writes by its own policy', async () => {
    const serial = await startTestBed('fork-serial', SERIAL, { model: { script: SCRIPT }, worker: { agent: { nudge: false } } });
    try {
      // The source ran under the parallel policy; the serial bed's client forks it onto its own worker.
      const onParallel = await bed.client.fork(source.id, uniqueId('parallel'));
      const onSerial = await serial.client.fork(source.id, uniqueId('serial'));
      assert.deepEqual(onSerial.session.todos, onParallel.session.todos);
      const parallelTurn = await chat(bed.client, onParallel.sessionId, 'Announce it');
      const serialTurn = await chat(serial.client, onSerial.sessionId, 'Announce it');
      for (const turn of [parallelTurn, serialTurn]) assert.deepEqual([turn.turn, turn.agent.lastTurn?.reason, turn.agent.lastTurn?.answer], [5, 'completed', 'Continued.']);
      assert.deepEqual(parallelTurn.todos, list(['Announce', 'in_progress'], ['Update the site', 'in_progress']).todos);
      // The turn began with no list; the serial worker refused the one with two todos in progress.
      assert.equal(serialTurn.todos, null);
      const refused = (await serial.client.transcript(onSerial.sessionId)).messages.filter((m) => m.role === 'tool').at(-1)!;
      assert.match(refused.content ?? '', /\[parallel-in-progress\]/);
    } finally {
      await serial.close();
    }
  });
});

describe('what a fork copies', () => {
  test('subagents open at the fork point are listed as forkedChildren, not copied or restarted; closed ones are not listed', async () => {
    const { client } = bed;
    const parent = uniqueId('parent');
    await client.start(parent);
    await client.spawnSubagent(parent, { name: 'done', task: 'Finish first' });
    await client.spawnSubagent(parent, { name: 'open', task: 'Keep going' });
    await client.todoWrite(`${parent}/open`, { todos: [todo('Keep going', 'in_progress')] });
    await client.close(`${parent}/done`);
    await until('the parent hears that done closed', async () => ((await client.session(parent)).children.find((c) => c.name === 'done')?.closed ? true : undefined));
    const forked = await client.fork(parent, uniqueId('no-children'));
    assert.deepEqual(forked.forkedChildren, [{ name: 'open', sessionId: `${parent}/open`, task: 'Keep going', closed: false, counts: null }]);
    assert.deepEqual(forked.session.forkedChildren, forked.forkedChildren);
    assert.deepEqual(forked.session.children, []);
    assert.deepEqual((await client.tree(forked.sessionId)).children, []);
    const child = await client.session(`${parent}/open`);
    assert.deepEqual([child.closed, child.parent?.sessionId], [false, parent], 'the child still belongs to its parent');
    await client.close(parent);
  });

  test('forkedFrom is in the session query, in the listing (from the memo the fork starts with) and stays after the fork continues as new', async () => {
    const { client } = bed;
    const forked = await client.fork(source.id, uniqueId('listed'), { beforeTurn: 1 });
    for (const text of TURNS) await chat(client, forked.sessionId, text);
    assert.ok((await client.historyRuns(forked.sessionId)).length >= 2, 'the fork continued as new');
    const now = await client.session(forked.sessionId);
    assert.deepEqual(now.forkedFrom, forked.forkedFrom);
    // The fork's own history, from the state it was given through its continue-as-new, replays
    // on today's code and folds offline to the list it answers, under either policy.
    for (const policy of [SERIAL, PARALLEL]) assert.deepEqual((await replaySession(client, forked.sessionId, policy)).final.todos, now.todos);
    const listed = await until('the fork in the listing', async () => (await client.list({ open: true })).find((s) => s.id === forked.sessionId && s.version !== null && s.version > 0));
    assert.deepEqual(listed.forkedFrom, forked.forkedFrom);
    const plain = await until('the source in the listing', async () => (await client.list()).find((s) => s.id === source.id));
    assert.equal(plain.forkedFrom, null);
  });
});

describe('a fork that cannot be made starts nothing', () => {
  /** Asserts that no session `id` exists. */
  async function notStarted(client: SessionClient, id: string): Promise<void> {
    await assert.rejects(client.session(id), SessionNotFoundError, `${id} was not started`);
  }

  test('a missing source, a taken id, a run, event or turn the source does not have: each named, nothing started', async () => {
    const { client } = bed;
    const runs = await client.historyRuns(source.id);
    const events = runs.at(-1)!.history.events!.length;
    const cases: Array<[ForkAt, RegExp, string]> = [
      [{ eventId: events + 1 }, new RegExp(`has no event ${events + 1}; its events are 1 to ${events} \\[no-such-event\\]`), 'no-such-event'],
      [{ eventId: 3, runId: 'no-such-run-id' }, /has no run "no-such-run-id"; its runs, oldest first, are /, 'no-such-run'],
      [{ beforeTurn: 9 }, /has no turn 9 to fork before; its history begins turns 1 to 4 \[no-such-turn\]/, 'no-such-turn'],
    ];
    for (const [at, message, rule] of cases) {
      const newId = uniqueId('refused');
      await assertRejected(client.fork(source.id, newId, at), rule as never, message);
      await notStarted(client, newId);
    }
    const newId = uniqueId('refused');
    const missing = uniqueId('missing');
    await assert.rejects(client.fork(missing, newId), (error: unknown) => error instanceof SessionNotFoundError && error.message === `no session "${missing}": there is nothing to fork`);
    await notStarted(client, newId);
    await assert.rejects(client.fork(source.id, source.id), (error: unknown) => error instanceof SessionExistsError && /session "[^"]+" already exists \(running\)/.test(error.message));
    const closed = uniqueId('taken');
    await client.start(closed);
    await client.close(closed);
    await assert.rejects(client.fork(source.id, closed), (error: unknown) => error instanceof SessionExistsError && /already exists \(closed\)/.test(error.message));
    await assert.rejects(client.fork(source.id, 'a/b'), InvalidSessionIdError);
    await assert.rejects(client.fork(source.id, uniqueId('zero'), { eventId: 0 }), (error: unknown) => error instanceof InvalidInputError && /positive integer, got 0/.test(error.message));
  });

  test('a fork with no worker on the task queue says so instead of waiting', async () => {
    const client = await connectClient(uniqueId('no-worker'));
    try {
      const newId = uniqueId('unserved');
      await assert.rejects(client.fork(source.id, newId), NoWorkerError);
      await notStarted(client, newId);
    } finally {
      await client.closeConnection();
    }
  });

  test('a fork input the workflow cannot trust fails the run at once, naming what is wrong', async () => {
    const { client } = bed;
    const forged = uniqueId('forged');
    const handle = await client.temporal.workflow.start('agentSession', {
      workflowId: forged,
      taskQueue: bed.taskQueue,
      args: [{ fork: { from: { id: source.id, runId: 'r', eventId: 1 }, children: [], state: { turn: 1, turnOpen: true }, agent: {} } }],
    });
    await assert.rejects(handle.result(), (error: unknown) => /fork\.state and fork\.agent must pass the checks of a carried state/.test(String(((error as Error).cause as Error | undefined)?.message ?? error)));
  });
});

describe('the fork over HTTP and on the command line', () => {
  test('POST /sessions/{id}/fork starts the fork (201) and answers 404, 409, 422 and 400 as the other routes do', async () => {
    const { http } = bed;
    const runs = await bed.client.historyRuns(source.id);
    const first = runs[0]!;
    const newId = uniqueId('http');
    const created = await httpCall(http.url, 'POST', `/sessions/${source.id}/fork`, { newId, at: { eventId: 20, runId: first.runId } });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const body = created.json as ForkResult;
    assert.deepEqual(body.forkedFrom, { id: source.id, runId: first.runId, eventId: 20 });
    assert.equal((await httpCall(http.url, 'GET', `/sessions/${newId}`)).json.forkedFrom.eventId, 20);
    assert.equal((await httpCall(http.url, 'POST', `/sessions/${source.id}/fork`, { newId: uniqueId('http'), beforeTurn: 3 })).status, 201);

    const answers = [
      [await httpCall(http.url, 'POST', `/sessions/${uniqueId('nobody')}/fork`, { newId: uniqueId('http') }), 404, 'session-not-found'],
      [await httpCall(http.url, 'POST', `/sessions/${source.id}/fork`, { newId }), 409, 'session-exists'],
      [await httpCall(http.url, 'POST', `/sessions/${source.id}/fork`, { newId: uniqueId('http'), at: { eventId: 100_000 } }), 422, 'rejected'],
      [await httpCall(http.url, 'POST', `/sessions/${source.id}/fork`, { newId: uniqueId('http'), beforeTurn: 40 }), 422, 'rejected'],
      [await httpCall(http.url, 'POST', `/sessions/${source.id}/fork`, { newId: uniqueId('http'), at: { eventId: 3 }, beforeTurn: 1 }), 400, 'invalid-input'],
      [await httpCall(http.url, 'POST', `/sessions/${source.id}/fork`, { newId: uniqueId('http'), at: { eventId: -1 } }), 400, 'invalid-input'],
      [await httpCall(http.url, 'POST', `/sessions/${source.id}/fork`, {}), 400, 'invalid-input'],
    ] as const;
    for (const [answer, status, code] of answers) {
      assert.equal(answer.status, status, `${answer.request} ${JSON.stringify(answer.json)}`);
      assert.equal(answer.json.code, code);
      assert.equal(typeof answer.json.error, 'string');
    }
    assert.match(answers[2][0].json.error, /has no event 100000/);
    assert.equal(answers[2][0].json.rule, 'no-such-event');
    const doc = (await httpCall(http.url, 'GET', '/openapi.json')).json;
    assert.ok(doc.paths['/sessions/{id}/fork']?.post, 'the route is in the OpenAPI document');
  });

  test('agent-sessions fork SOURCE NEW [--at EVENT_ID [--run RUN_ID] | --before-turn N]', async () => {
    const env = { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue };
    const cli = (...args: string[]) => runCli(args, { env });
    const runs = await bed.client.historyRuns(source.id);
    const first = runs[0]!;
    const atEvent = uniqueId('cli-at');
    const forked = await cli('fork', source.id, atEvent, '--at', '25', '--run', first.runId);
    assert.equal(forked.code, 0, forked.stderr);
    assert.match(forked.stdout, new RegExp(`^forked session ${atEvent} from ${source.id} at event 25 of run ${first.runId}: turn \\d+, `));
    const shown = JSON.parse((await cli('session', atEvent, '--json')).stdout) as SessionSnapshot;
    assert.deepEqual(shown.forkedFrom, { id: source.id, runId: first.runId, eventId: 25 });
    assert.match((await cli('session', atEvent)).stdout, new RegExp(`\\nforked from ${source.id} at event 25 of run ${first.runId}\\n`));

    const before = await cli('fork', source.id, uniqueId('cli-before'), '--before-turn', '2');
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /: turn 1, 3 todos \(2 pending, 1 in progress, 0 completed\), version \d+/);
    const newest = await cli('fork', source.id, uniqueId('cli-newest'));
    assert.equal(newest.code, 0, newest.stderr);

    const refusals = [
      [await cli('fork', source.id, uniqueId('cli'), '--at', '99999'), 1, /agent-sessions: fork rejected: run \S+ of session "[^"]+" has no event 99999; its events are 1 to \d+ \[no-such-event\]/],
      [await cli('fork', uniqueId('cli-missing'), uniqueId('cli')), 1, /agent-sessions: no session "cli-missing-[^"]+": there is nothing to fork/],
      [await cli('fork', source.id, atEvent), 1, /already exists \(running\)/],
      [await cli('fork', source.id, uniqueId('cli'), '--at', '3', '--before-turn', '1'), 2, /fork takes --at EVENT_ID or --before-turn N, not both/],
      [await cli('fork', source.id, uniqueId('cli'), '--run', first.runId), 2, /--run RUN_ID names the run of an --at EVENT_ID/],
      [await cli('fork', source.id, uniqueId('cli'), '--at', 'three'), 2, /--at must be a positive integer \(a history event id\), got "three"/],
      [await cli('fork', source.id, uniqueId('cli'), '--before-turn', '7'), 1, /has no turn 7 to fork before/],
    ] as const;
    for (const [result, code, message] of refusals) {
      assert.equal(result.code, code, result.stderr);
      assert.match(result.stderr, message);
    }
  });
});

describe('the source', () => {
  test('is never touched: its history after every fork of this file is the history it had before them', async () => {
    assert.deepEqual(await bed.client.exportHistory(source.id), source.history);
  });
});
