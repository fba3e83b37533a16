/**
 * Bad input through every channel: the SessionClient, the CLI, the HTTP API and a foreign client
 * (`temporal workflow update execute`). Every case of `corpus.ts`, and random arguments from
 * fast-check, must be either rejected with a message naming the rule the domain predicts, or
 * accepted with the stored list equal to the input after trimming (the foreign client: as
 * sent). Where Temporal or its SDK decides the answer (`LIMITS` in corpus.ts), the channel must
 * give exactly the answer and leave exactly the history listed there. History holds exactly the
 * accepted writes, the worker keeps running, and the HTTP service never answers 500. The number
 * of cases tried is printed per channel.
 *
 * Needs `npm run build` first (the CLI runs `dist/`).
 */
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { TodoRejectedError } from '../../src/client';
import { historyEventsJson, runsOf, sessionEventsFromHistory } from '../../src/history';
import type { RejectionRule, TodoItem } from '../../src/todo';
import { replaySessionHistory } from '../../src/worker';
import {
  countAcceptedUpdates,
  ROOT,
  runCli,
  runTemporalCli,
  temporalAddress,
  uniqueId,
  useTestBed,
  type ProcessResult,
} from '../helpers';
import {
  CORPUS,
  HTTP_BODY_LIMIT,
  limitFor,
  LIMITS,
  POLICY,
  predict,
  predictHttp,
  randomArgsText,
  RULES,
  type Channel,
  type CorpusCase,
  type Limit,
  type Outcome,
} from './corpus';

const bed = useTestBed('bad-input', POLICY, { http: { policy: POLICY, pollMs: 100 } });
const { taskQueue } = bed;
let scratch: string;

/** Cases per session: each session's history is read once, after its batch. */
const CASES_PER_SESSION = 15;
/** Largest `--json` / `--input` argument sent on the command line (Linux caps one argument at 128 KiB). */
const MAX_ARGV_TEXT = 100_000;
/** How many random cases each fast-check property sends. */
const RANDOM_RUNS = Number(process.env.BAD_INPUT_RANDOM_RUNS ?? 100);
const seedFromEnv = process.env.BAD_INPUT_SEED !== undefined ? { seed: Number(process.env.BAD_INPUT_SEED) } : {};

before(() => {
  scratch = mkdtempSync(join(tmpdir(), 'agent-sessions-bad-input-'));
});

after(() => {
  rmSync(scratch, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// What a channel answered
// ---------------------------------------------------------------------------------------------

type Verdict =
  | { kind: 'accepted'; version: number | undefined }
  | { kind: 'rejected'; rule: string | undefined; message: string; problems?: unknown }
  | { kind: 'invalid-json'; message: string }
  | { kind: 'too-large' }
  /** The Temporal CLI refused text that JavaScript parses (it sent nothing). */
  | { kind: 'refused-by-cli'; message: string }
  | { kind: 'error'; message: string; status?: number };

interface Driver {
  channel: Channel;
  /** What the channel must answer for a case. */
  predict(c: CorpusCase): Outcome;
  /** Whether the case can be sent at all (the client takes values, so not non-JSON text or raw bytes). */
  sendable(c: CorpusCase): boolean;
  send(sessionId: string, c: CorpusCase): Promise<Verdict>;
  /** Whether a rejection's message must equal the domain's word for word (the foreign client prints it escaped). */
  exactMessages: boolean;
}

const clientDriver: Driver = {
  channel: 'client',
  predict: (c) => predict(c.text, { trim: true }),
  sendable: (c) => c.bytes === undefined && predict(c.text, { trim: true }).kind !== 'invalid-json',
  exactMessages: true,
  async send(sessionId, c) {
    try {
      const result = await bed.client.todoWrite(sessionId, JSON.parse(c.text));
      return { kind: 'accepted', version: result.version };
    } catch (error) {
      if (error instanceof TodoRejectedError) return { kind: 'rejected', rule: error.rule, message: error.message, problems: error.problems };
      return { kind: 'error', message: describeError(error) };
    }
  },
};

const httpStatuses = new Map<number, number>();

const httpDriver: Driver = {
  channel: 'http',
  predict: predictHttp,
  sendable: () => true,
  exactMessages: true,
  async send(sessionId, c) {
    const url = `${bed.http.url}/sessions/${encodeURIComponent(sessionId)}/todo_write`;
    const payload = c.bytes ?? Buffer.from(c.text, 'utf8');
    let answer: { status: number; text: string };
    try {
      // A body over the limit goes on a connection of its own: after a 413 the service drops
      // the keep-alive connection (see the 413 test below), which must not hit the next case.
      answer = payload.byteLength > HTTP_BODY_LIMIT ? await postOnce(url, payload) : await postFetch(url, payload);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return { kind: 'error', message: `no answer: ${(error as Error).message} (${cause?.code ?? '?'}: ${cause?.message ?? '?'})` };
    }
    const { status, text } = answer;
    httpStatuses.set(status, (httpStatuses.get(status) ?? 0) + 1);
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      return { kind: 'error', status, message: `not JSON: ${text.slice(0, 200)}` };
    }
    switch (status) {
      case 200:
        return { kind: 'accepted', version: body.version };
      case 422:
        return { kind: 'rejected', rule: body.rule, message: body.error, problems: body.problems };
      case 413:
        return { kind: 'too-large' };
      case 400:
        if (/not valid JSON/.test(body.error)) return { kind: 'invalid-json', message: body.error };
    }
    return { kind: 'error', status, message: String(body.error) };
  },
};

async function postFetch(url: string, body: Uint8Array): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, text: await response.text() };
}

/** One POST on a connection of its own (or on `agent`'s), with node:http. */
function postOnce(url: string, body: Uint8Array, agent: Agent | false = false): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.byteLength } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const cliDriver: Driver = {
  channel: 'cli',
  predict: (c) => predict(c.text, { trim: true }),
  sendable: (c) => c.cli === true,
  exactMessages: true,
  async send(sessionId, c) {
    const env = { AGENT_SESSIONS_TASK_QUEUE: taskQueue };
    // Large texts and raw bytes go on stdin, from a file (a slowly written pipe has its own test below).
    const result = viaStdin(c)
      ? await runCliWithStdinFile(['write', sessionId], env, writeScratch(c))
      : await runCli(['write', sessionId, `--json=${c.text}`], { env });
    if (result.code === 0) {
      const line = result.stdout.trim();
      return /^Updated todo list: \d+ pending, \d+ in progress, \d+ completed$/.test(line)
        ? { kind: 'accepted', version: undefined }
        : { kind: 'error', message: `exit 0 but printed ${JSON.stringify(line.slice(0, 200))}` };
    }
    const message = result.stderr.replace(/^agent-sessions: /, '').replace(/\n$/, '');
    if (result.code === 1 && /are not valid JSON/.test(message)) return { kind: 'invalid-json', message };
    if (result.code === 1 && /rejected/.test(message)) return { kind: 'rejected', rule: firstRule(message), message };
    return { kind: 'error', message: `exit ${result.code}: ${message.slice(0, 300)}` };
  },
};

const foreignDriver: Driver = {
  channel: 'foreign',
  predict: (c) => predict(c.text, { trim: false }),
  sendable: () => true,
  exactMessages: false,
  async send(sessionId, c) {
    const input = viaFile(c) ? ['--input-file', writeScratch(c)] : [`--input=${c.text}`];
    return foreignVerdict(c, await runTemporalCli(['workflow', 'update', 'execute', '-w', sessionId, '--name', 'todo_write', ...input, '-o', 'json']));
  },
};

function foreignVerdict(c: CorpusCase | undefined, result: ProcessResult): Verdict {
  if (result.code === 0) {
    const answer = JSON.parse(result.stdout) as { result?: { version?: number } };
    return { kind: 'accepted', version: answer.result?.version };
  }
  if (/is not valid JSON/.test(result.stderr)) {
    const parses = c !== undefined && predict(c.text, { trim: false }).kind !== 'invalid-json';
    return parses ? { kind: 'refused-by-cli', message: result.stderr.trim() } : { kind: 'invalid-json', message: result.stderr.trim() };
  }
  const rejected = /unable to update workflow: (.*)/s.exec(result.stderr);
  if (rejected !== null && /\(type: TodoRejected,/.test(result.stderr)) {
    // The CLI logs the failure as a quoted logfmt value: undo its escapes to read what was said.
    return { kind: 'rejected', rule: firstRule(rejected[1]!), message: rejected[1]!.trim().replace(/\\(["\\])/g, '$1') };
  }
  return { kind: 'error', message: `exit ${result.code}: ${result.stderr.trim().slice(0, 300)}` };
}

// ---------------------------------------------------------------------------------------------
// Running a batch of cases against one session
// ---------------------------------------------------------------------------------------------

interface ChannelReport {
  tried: number;
  byOutcome: Map<string, number>;
  /** Answers that are not the expected one: these fail the channel's test. */
  unexpected: string[];
  refusedByCli: string[];
  sessions: number;
}

/** The LIMITS entries that were sent and answered exactly as promised, as `channel case`. */
const limitsKept = new Set<string>();
const limitKey = (limit: Pick<Limit, 'channel' | 'case'>): string => `${limit.channel} ${limit.case}`;
const triedPerChannel = new Map<string, number>();

async function runBatch(driver: Driver, cases: readonly CorpusCase[], report: ChannelReport): Promise<void> {
  const sessionId = uniqueId(`bad-${driver.channel}`);
  await bed.client.start(sessionId);
  report.sessions++;
  const stored: TodoItem[][] = [];
  for (const c of cases) {
    // JSON text must be UTF-8 (RFC 8259): the HTTP service and the CLI refuse other bytes as
    // not valid JSON; what a foreign client's bytes get is the SDK's doing (LIMITS).
    const limit = limitFor(c.name, driver.channel);
    const notUtf8 = c.bytes !== undefined && !isUtf8(c.bytes);
    const expected: Outcome = limit?.answer ?? (notUtf8 ? { kind: 'invalid-json', reason: 'not UTF-8' } : driver.predict(c));
    const verdict = await driver.send(sessionId, c);
    report.tried++;
    const outcomeKey = expected.kind === 'rejected' ? `rejected [${expected.rule}]` : expected.kind;
    report.byOutcome.set(outcomeKey, (report.byOutcome.get(outcomeKey) ?? 0) + 1);

    let problem = judge(driver, expected, verdict);
    if (verdict.kind === 'accepted') {
      const todos = await bed.client.todos(sessionId);
      assert.ok(todos !== null, `${c.name}: accepted, so the session has a list`);
      stored.push(todos);
      if (verdict.version !== undefined && verdict.version !== stored.length) {
        problem ??= `version ${verdict.version} after ${stored.length} accepted writes`;
      }
      if (expected.kind === 'accepted' && !isDeepStrictEqual(todos, expected.todos)) {
        problem ??= `stored ${preview(todos)}, expected ${preview(expected.todos)}`;
      }
    }
    if (verdict.kind === 'refused-by-cli') report.refusedByCli.push(c.name);
    if (limit !== undefined && problem === undefined) problem = await limitHistoryProblem(sessionId, limit, stored.length, c.bytes);
    record(limit, `${driver.channel} ${c.name}`, problem, expected, verdict, report);
  }

  // One valid write at the end: the worker is still there and the session still takes writes.
  const sanity = await bed.client.todoWrite(sessionId, { todos: [{ content: `sanity after ${cases.length} cases`, status: 'completed' }] });
  stored.push([{ content: `sanity after ${cases.length} cases`, status: 'completed' }]);
  assert.equal(sanity.version, stored.length, `${driver.channel}: the session's version counts exactly the accepted writes`);

  const history = await bed.client.exportHistory(sessionId);
  assert.equal(countAcceptedUpdates(history), stored.length, `${driver.channel}: history holds exactly the ${stored.length} accepted writes`);
  const logged = runsOf(history)
    .flatMap((run) => sessionEventsFromHistory(run, sessionId))
    .flatMap(({ event }) => (event.type === 'todo/write' ? [event.todos] : []));
  assert.deepEqual(logged, stored, `${driver.channel}: each logged write is the list the session answered after it`);
  // Only the failures LIMITS promises for a case sent here (Temporal's own), as many as it says.
  const failedTasks = historyEventsJson(history).filter((event) => event.workflowTaskFailedEventAttributes !== undefined);
  const causeOf = (event: (typeof failedTasks)[number]): string => String((event.workflowTaskFailedEventAttributes as { cause?: unknown }).cause);
  const promises = cases.flatMap((c) => limitFor(c.name, driver.channel)?.failedWorkflowTasks ?? []);
  const unpromised = failedTasks.filter((event) => !promises.some((p) => p.cause === causeOf(event)));
  for (const p of promises) {
    const times = failedTasks.filter((event) => causeOf(event) === p.cause).length;
    assert.ok(times >= p.min && times <= p.max, `${driver.channel}: ${times} workflow tasks failed with ${p.cause} in ${sessionId}, LIMITS promises ${p.min} to ${p.max}`);
  }
  assert.deepEqual(unpromised, [], `${driver.channel}: no workflow task failed in ${sessionId} but those LIMITS promises`);
  const replayed = await replaySessionHistory(history, POLICY);
  assert.deepEqual(replayed.final.todos, stored.at(-1), `${driver.channel}: the history replays to the same list`);
}

/**
 * Why the session's history is not what `limit` promises once its case was sent, or `undefined`
 * when it is. `writes` counts the writes the session accepted, this one included; `sent` is the
 * raw bytes of the case, which an accepted write must have logged as they were.
 */
async function limitHistoryProblem(sessionId: string, limit: Limit, writes: number, sent: Uint8Array | undefined): Promise<string | undefined> {
  const history = await bed.client.exportHistory(sessionId);
  const logged = countAcceptedUpdates(history);
  if (limit.history === 'nothing') return logged === writes ? undefined : `history holds ${logged} writes, expected ${writes}: the case left a write behind`;
  if (logged !== writes) return `history holds ${logged} writes, expected ${writes}`;
  const runs = runsOf(history);
  const last = runs.flatMap((run) => sessionEventsFromHistory(run, sessionId)).filter(({ event }) => event.type === 'todo/write').at(-1)?.event;
  if (last?.type !== 'todo/write' || !isDeepStrictEqual(last.todos, limit.history)) return `the fold of history reads ${preview(last)}, expected ${preview(limit.history)}`;
  if (sent !== undefined) {
    const payload = runs
      .flatMap((run) => run.events ?? [])
      .flatMap((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads?.[0]?.data ?? [])
      .at(-1);
    if (payload === undefined || !Buffer.from(payload).equals(Buffer.from(sent))) return 'history does not hold the bytes as sent';
  }
  return undefined;
}

/** Why a verdict is not the expected outcome, or `undefined` when it is. */
function judge(driver: Driver, expected: Outcome, verdict: Verdict): string | undefined {
  switch (expected.kind) {
    case 'accepted':
      return verdict.kind === 'accepted' ? undefined : `expected accepted, got ${show(verdict)}`;
    case 'invalid-json':
      return verdict.kind === 'invalid-json' ? undefined : `expected a refusal as invalid JSON, got ${show(verdict)}`;
    case 'too-large':
      return verdict.kind === 'too-large' ? undefined : `expected 413, got ${show(verdict)}`;
    case 'temporal-error':
      return verdict.kind === 'error' && expected.message.test(verdict.message) ? undefined : `expected Temporal's error ${String(expected.message)}, got ${show(verdict)}`;
    case 'refused-by-cli':
      return verdict.kind === 'refused-by-cli' && expected.message.test(verdict.message) ? undefined : `expected the Temporal CLI to refuse it with ${String(expected.message)}, got ${show(verdict)}`;
    case 'rejected': {
      if (verdict.kind !== 'rejected') return `expected rejected [${expected.rule}], got ${show(verdict)}`;
      if (verdict.rule !== expected.rule) return `expected rule ${expected.rule}, got ${String(verdict.rule)}: ${verdict.message.slice(0, 200)}`;
      if (!verdict.message.includes(`[${expected.rule}]`)) return `the message does not name [${expected.rule}]: ${verdict.message.slice(0, 200)}`;
      const exact = driver.exactMessages && expected.problems.length > 0;
      if (exact && verdict.message !== expected.message) return `message differs:\n  got      ${verdict.message.slice(0, 300)}\n  expected ${expected.message.slice(0, 300)}`;
      // The failure's details carry the first ten problems; the message counts them all.
      if (exact && verdict.problems !== undefined && !isDeepStrictEqual(verdict.problems, expected.problems.slice(0, 10))) return 'the problems differ from the domain\'s';
      const missing = expected.problems.slice(0, 10).filter((p) => !verdict.message.includes(`[${p.rule}]`));
      if (missing.length > 0) return `the message does not name ${missing.map((p) => `[${p.rule}]`).join(', ')}`;
      return undefined;
    }
  }
}

/** Files a case's result: a problem fails the channel's test; a limit answered as promised counts as kept. */
function record(limit: Limit | undefined, label: string, problem: string | undefined, expected: Outcome, verdict: Verdict, report: ChannelReport): void {
  if (problem === undefined) {
    if (limit !== undefined) limitsKept.add(limitKey(limit));
    return;
  }
  report.unexpected.push(`${label}: ${problem}\n  (expected ${expected.kind}${limit !== undefined ? ', a limit in LIMITS' : ''}, got ${show(verdict)})`);
}

async function runCorpus(t: TestContext, driver: Driver, cases: readonly CorpusCase[], concurrency: number): Promise<ChannelReport> {
  const report: ChannelReport = { tried: 0, byOutcome: new Map(), unexpected: [], refusedByCli: [], sessions: 0 };
  const batches: CorpusCase[][] = [];
  // A case whose workflow task fails goes alone: the server's retries of that task would answer
  // the cases after it in the same session.
  const failsTask = (c: CorpusCase): boolean => limitFor(c.name, driver.channel)?.failedWorkflowTasks !== undefined;
  const together = cases.filter((c) => !failsTask(c));
  for (const c of cases.filter(failsTask)) batches.push([c]);
  for (let i = 0; i < together.length; i += CASES_PER_SESSION) batches.push(together.slice(i, i + CASES_PER_SESSION));
  await inPool(batches, concurrency, (batch) => runBatch(driver, batch, report));
  triedPerChannel.set(driver.channel, (triedPerChannel.get(driver.channel) ?? 0) + report.tried);
  t.diagnostic(`${driver.channel}: ${report.tried} corpus cases tried in ${report.sessions} sessions`);
  t.diagnostic(`${driver.channel}: expected outcomes ${[...report.byOutcome].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`);
  if (report.refusedByCli.length > 0) t.diagnostic(`${driver.channel}: refused by the Temporal CLI before sending (nothing reached history): ${report.refusedByCli.join(', ')}`);
  for (const line of report.unexpected) t.diagnostic(`MISMATCH ${line}`);
  return report;
}

// ---------------------------------------------------------------------------------------------
// The corpus through each channel
// ---------------------------------------------------------------------------------------------

test('the corpus through the SessionClient (client.todoWrite)', async (t) => {
  const cases = CORPUS.filter((c) => clientDriver.sendable(c));
  const report = await runCorpus(t, clientDriver, cases, 3);
  assert.deepEqual(report.unexpected, []);
  assert.equal(report.tried, cases.length);
});

test('the corpus through the HTTP API (POST /sessions/{id}/todo_write)', async (t) => {
  const report = await runCorpus(t, httpDriver, CORPUS, 3);
  t.diagnostic(`http: status distribution ${[...httpStatuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(', ')}`);
  assert.deepEqual(report.unexpected, []);
  assert.equal(httpStatuses.get(500) ?? 0, 0, 'the HTTP service never answers 500');
});

test('a subset of the corpus through the CLI (agent-sessions write --json, and stdin)', async (t) => {
  const cases = CORPUS.filter((c) => cliDriver.sendable(c));
  const report = await runCorpus(t, cliDriver, cases, 2);
  t.diagnostic(`cli: ${cases.filter(viaStdin).length} of them on stdin`);
  assert.deepEqual(report.unexpected, []);
  assert.ok(cases.length >= 40, 'the CLI subset covers every category');
});

test('the corpus through a foreign client (temporal workflow update execute)', async (t) => {
  const report = await runCorpus(t, foreignDriver, CORPUS, 3);
  assert.deepEqual(report.unexpected, []);
});

test('bad write options and payloads: If-Match, --expected-version, the foreign second argument and encodings', async (t) => {
  const valid = '{"todos":[{"content":"Options","status":"pending"}]}';
  let tried = 0;
  let accepted = 0;
  // Each option case gets a session still at version 0, where a bad version read as 0 would pass.
  const sessions: string[] = [];
  const session = async (): Promise<string> => {
    const id = uniqueId('bad-options');
    await bed.client.start(id);
    sessions.push(id);
    return id;
  };

  // HTTP If-Match: anything but a version is a 400 naming If-Match, including what Number()
  // would read leniently ("0x1" as 1, "1e0" as 1, an empty quoted tag as 0).
  for (const ifMatch of ['abc', '-1', '1.5', '"x"', 'W/"-3"', '0x1', '1e0', '""', '"  "']) {
    const id = await session();
    const response = await fetch(`${bed.http.url}/sessions/${id}/todo_write`, { method: 'POST', headers: { 'content-type': 'application/json', 'If-Match': ifMatch }, body: valid });
    httpStatuses.set(response.status, (httpStatuses.get(response.status) ?? 0) + 1);
    tried++;
    const body = (await response.json()) as { error?: string; version?: number };
    if (response.status === 200) accepted++;
    assert.equal(response.status, 400, `If-Match ${ifMatch}: ${body.error ?? `accepted at version ${String(body.version)}`}`);
    assert.match(body.error ?? '', /If-Match must be a session version/);
  }

  // CLI --expected-version: anything but a version is a usage error (exit 2) naming the flag.
  for (const version of ['abc', '-1', '1.5', '0x1', '1e0', '', ' ']) {
    const id = await session();
    const result = await runCli(['write', id, `--expected-version=${version}`, `--json=${valid}`], { env: { AGENT_SESSIONS_TASK_QUEUE: taskQueue } });
    tried++;
    if (result.code === 0) accepted++;
    assert.equal(result.code, 2, `--expected-version=${JSON.stringify(version)}: exit ${result.code} ${result.stderr}`);
    assert.match(result.stderr, /--expected-version must be a non-negative integer/);
  }

  const id = await session();
  const foreign = (extra: string[]) => runTemporalCli(['workflow', 'update', 'execute', '-w', id, '--name', 'todo_write', ...extra, '-o', 'json']);
  const expectRule = async (extra: string[], rule: RejectionRule, pattern: RegExp): Promise<void> => {
    const verdict = foreignVerdict(undefined, await foreign(extra));
    tried++;
    if (verdict.kind === 'accepted') accepted++;
    assert.equal(verdict.kind, 'rejected', `${extra.join(' ')}: ${show(verdict)}`);
    assert.equal((verdict as { rule: string }).rule, rule);
    assert.match((verdict as { message: string }).message, pattern);
  };
  await expectRule([`--input=${valid}`, '--input={"expectedVersion":"x"}'], 'shape', /expectedVersion must be a non-negative integer/);
  await expectRule([`--input=${valid}`, '--input={"expectedVersion":-1}'], 'shape', /expectedVersion/);
  await expectRule([`--input=${valid}`, '--input={"expectedVersion":1e999}'], 'shape', /expectedVersion/);
  await expectRule([`--input=${valid}`, '--input={"expectedVersion":5}'], 'stale-version', /version/);
  // A second argument that is not {"expectedVersion": N} is refused: ignoring it would skip the
  // check its sender asked for.
  await expectRule([`--input=${valid}`, '--input=[0]'], 'shape', /the second argument must be an object \{"expectedVersion": N\}/);
  await expectRule([`--input=${valid}`, '--input=3'], 'shape', /the second argument must be an object \{"expectedVersion": N\}/);
  await expectRule([`--input=${valid}`, '--input={"expectedVersoin":3}'], 'shape', /unknown property "expectedVersoin"/);
  await expectRule([], 'shape', /the arguments must be an object/);
  await expectRule(['--input', Buffer.from('not json').toString('base64'), '--input-base64', '--input-meta', 'encoding=binary/plain'], 'shape', /todos must be an array/);

  // Accepted: an explicit null version is "no version", and so is an empty options object.
  for (const extra of [[`--input=${valid}`, '--input=null'], [`--input=${valid}`, '--input={}']]) {
    const verdict = foreignVerdict(undefined, await foreign(extra));
    tried++;
    assert.equal(verdict.kind, 'accepted', `${extra.join(' ')}: ${show(verdict)}`);
    accepted++;
  }

  // A third argument is refused: todo_write takes two, and a write logged with more would not be
  // what its sender meant.
  await expectRule([`--input=${valid}`, '--input={}', '--input="extra"'], 'shape', /todo_write takes at most two arguments/);

  // A payload encoding the SDK does not know: refused by the SDK before the validator (LIMITS).
  const unknownEncoding = LIMITS.find((limit) => limit.case === 'unknown-payload-encoding' && limit.channel === 'foreign');
  assert.ok(unknownEncoding !== undefined, 'LIMITS lists the unknown payload encoding');
  const before = countAcceptedUpdates(await bed.client.exportHistory(id));
  const unknown = foreignVerdict(undefined, await foreign([`--input=${valid}`, '--input-meta', 'encoding=foo/bar']));
  tried++;
  const problem = judge(foreignDriver, unknownEncoding.answer, unknown) ?? (await limitHistoryProblem(id, unknownEncoding, before, undefined));
  assert.equal(problem, undefined, `--input-meta encoding=foo/bar: ${problem ?? ''}`);
  limitsKept.add(limitKey(unknownEncoding));

  let logged = 0;
  for (const sessionId of sessions) logged += countAcceptedUpdates(await bed.client.exportHistory(sessionId));
  assert.equal(logged, accepted, 'history holds exactly the accepted writes');
  const failedTasks = (await Promise.all(sessions.map(async (sessionId) => historyEventsJson(await bed.client.exportHistory(sessionId)))))
    .flat()
    .filter((event) => event.workflowTaskFailedEventAttributes !== undefined);
  assert.deepEqual(failedTasks, [], 'no workflow task failed');
  triedPerChannel.set('options', tried);
  t.diagnostic(`options and payloads: ${tried} cases tried (HTTP If-Match, CLI --expected-version, foreign arguments and encodings)`);
});

test('after a 413 the HTTP service closes the connection and says so, and answers the next request on a new one', async () => {
  // The rest of a body over the limit is never read, so that connection cannot carry another
  // request: the promise is an honest `Connection: close`, never a keep-alive that is then dropped.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = `${bed.http.url}/sessions/${uniqueId('bad-keep-alive')}/todo_write`;
  const send = (body: Uint8Array, chunked = false) =>
    new Promise<{ status: number; connection: string | undefined; port: number | undefined }>((resolve, reject) => {
      const headers: Record<string, string | number> = { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': body.byteLength }) };
      const req = request(url, { method: 'POST', agent, headers }, (res) => {
        const port = req.socket?.localPort;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, port }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  try {
    // With a Content-Length over the limit (refused unread) and as a chunked stream (refused
    // once the limit is passed).
    for (const chunked of [false, true]) {
      const big = await send(Buffer.alloc(HTTP_BODY_LIMIT + 1, 0x78), chunked);
      assert.equal(big.status, 413);
      httpStatuses.set(413, (httpStatuses.get(413) ?? 0) + 1);
      assert.equal(big.connection, 'close', 'the 413 says the connection ends');
      const next = await send(Buffer.from('{"todos":1}'));
      assert.equal(next.status, 422);
      assert.notEqual(next.port, big.port, 'the next request went on a new connection');
      assert.equal(next.connection, 'keep-alive');
      const third = await send(Buffer.from('{"todos":1}'));
      assert.equal(third.port, next.port, 'which stays open as any other');
    }
    triedPerChannel.set('http (connection after 413)', 6);
  } finally {
    agent.destroy();
  }
});

test('the CLI reads tool arguments from a slowly written stdin pipe', async () => {
  const id = uniqueId('bad-slow-stdin');
  const result = await spawnCli(['write', id], { AGENT_SESSIONS_TASK_QUEUE: taskQueue }, { chunks: ['{"todos":[', '{"content":"Slow pipe","status":"pending"}]}'], pauseMs: 500 });
  triedPerChannel.set('cli (slow pipe)', 1);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(await bed.client.todos(id), [{ content: 'Slow pipe', status: 'pending' }]);
});

test('an unknown property with a 1.5 MB name is rejected without failing a workflow task', async (t) => {
  const id = uniqueId('bad-huge-key');
  await bed.client.todoWrite(id, { todos: [] });
  const started = Date.now();
  let verdict: Verdict;
  try {
    await bed.client.todoWrite(id, JSON.parse(`{"todos":[],"${'k'.repeat(1_500_000)}":1}`));
    verdict = { kind: 'accepted', version: undefined };
  } catch (error) {
    verdict = error instanceof TodoRejectedError ? { kind: 'rejected', rule: error.rule, message: error.message } : { kind: 'error', message: describeError(error) };
  }
  const tookMs = Date.now() - started;
  let next: string;
  try {
    await bed.client.todoWrite(id, { todos: [{ content: 'right after', status: 'pending' }] });
    next = 'accepted';
  } catch (error) {
    next = describeError(error);
  }
  const failedTasks = historyEventsJson(await bed.client.exportHistory(id)).filter((event) => event.workflowTaskFailedEventAttributes !== undefined);
  triedPerChannel.set('client (1.5 MB key)', 1);
  t.diagnostic(`1.5 MB key: ${show(verdict)} after ${tookMs} ms; the next write: ${next}; failed workflow tasks in history: ${failedTasks.length}`);
  assert.equal(verdict.kind, 'rejected', show(verdict));
  assert.equal((verdict as { rule?: string }).rule, 'shape');
  assert.deepEqual(failedTasks, []);
  assert.equal(next, 'accepted');
});

// ---------------------------------------------------------------------------------------------
// Random arguments (fast-check)
// ---------------------------------------------------------------------------------------------

async function randomProperty(t: TestContext, driver: Driver): Promise<void> {
  const sessionId = uniqueId(`bad-random-${driver.channel}`);
  await bed.client.start(sessionId);
  const stored: TodoItem[][] = [];
  let tried = 0;
  await fc.assert(
    fc.asyncProperty(randomArgsText, async (text) => {
      tried++;
      const c: CorpusCase = { name: `random #${tried}`, category: 'valid', text };
      const expected = driver.predict(c);
      const verdict = await driver.send(sessionId, c);
      if (verdict.kind === 'accepted') stored.push((await bed.client.todos(sessionId)) ?? []);
      const problem = judge(driver, expected, verdict);
      assert.equal(problem, undefined, `${text.slice(0, 300)}\n${problem ?? ''}`);
      if (expected.kind === 'accepted') assert.deepEqual(stored.at(-1), expected.todos, text.slice(0, 300));
      if (verdict.kind === 'accepted' && verdict.version !== undefined) assert.equal(verdict.version, stored.length);
    }),
    { numRuns: RANDOM_RUNS, ...seedFromEnv },
  );
  assert.equal(countAcceptedUpdates(await bed.client.exportHistory(sessionId)), stored.length, 'history holds exactly the accepted random writes');
  triedPerChannel.set(`${driver.channel} (random)`, tried);
  t.diagnostic(`${driver.channel}: ${tried} random cases tried (fast-check), ${stored.length} accepted`);
}

test('random arguments (fast-check) through the SessionClient', async (t) => {
  await randomProperty(t, clientDriver);
});

test('random arguments (fast-check) through the HTTP API', async (t) => {
  await randomProperty(t, httpDriver);
  assert.equal(httpStatuses.get(500) ?? 0, 0, 'the HTTP service never answers 500');
});

// ---------------------------------------------------------------------------------------------
// The limits of Temporal and its SDK, and the totals
// ---------------------------------------------------------------------------------------------

test('every limit of Temporal and its SDK in LIMITS was sent and answered exactly as promised', (t) => {
  for (const limit of LIMITS) t.diagnostic(`limit ${limitKey(limit)}: ${limit.answer.kind}${'message' in limit.answer ? ` ${String(limit.answer.message)}` : ''}; history: ${limit.history === 'nothing' ? 'nothing' : preview(limit.history)}`);
  assert.deepEqual([...limitsKept].sort(), LIMITS.map(limitKey).sort(), 'each LIMITS entry was exercised by a channel test and kept');
});

test('no prototype was polluted and the worker is still running', async (t) => {
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
  assert.equal(bed.worker.sessionWorker.worker.getState(), 'RUNNING');
  const id = uniqueId('bad-final');
  assert.equal((await bed.client.todoWrite(id, { todos: [{ content: 'still here', status: 'in_progress' }] })).version, 1);
  const total = [...triedPerChannel.values()].reduce((a, b) => a + b, 0);
  t.diagnostic(`cases tried: ${[...triedPerChannel].map(([channel, n]) => `${channel} ${n}`).join(', ')}; total ${total}`);
  t.diagnostic(`HTTP statuses: ${[...httpStatuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(', ')}`);
});

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function viaStdin(c: CorpusCase): boolean {
  return c.stdin === true || c.bytes !== undefined || Buffer.byteLength(c.text) > MAX_ARGV_TEXT || c.text.includes('\u0000');
}

function viaFile(c: CorpusCase): boolean {
  return c.bytes !== undefined || Buffer.byteLength(c.text) > MAX_ARGV_TEXT || c.text.includes('\u0000');
}

let scratchFiles = 0;
function writeScratch(c: CorpusCase): string {
  const file = join(scratch, `case-${++scratchFiles}.json`);
  writeFileSync(file, c.bytes ?? c.text);
  return file;
}

/**
 * `agent-sessions <args>` with a file as stdin (raw bytes, any size). With `chunks`, stdin is a
 * pipe instead, written one chunk at a time `pauseMs` apart, the way a slow producer writes.
 */
async function runCliWithStdinFile(args: string[], env: NodeJS.ProcessEnv, file: string): Promise<ProcessResult> {
  const fd = openSync(file, 'r');
  try {
    return await spawnCli(args, env, fd);
  } finally {
    closeSync(fd);
  }
}

async function spawnCli(args: string[], env: NodeJS.ProcessEnv, stdin: number | { chunks: string[]; pauseMs: number }): Promise<ProcessResult> {
  const fullEnv = { ...process.env, TEMPORAL_ADDRESS: await temporalAddress(), ...env };
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'agent-sessions.js'), ...args], {
    env: fullEnv,
    stdio: [typeof stdin === 'number' ? stdin : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  if (typeof stdin !== 'number' && child.stdin !== null) {
    const pipe = child.stdin;
    pipe.on('error', () => undefined); // the CLI may exit before reading it all
    for (const [index, chunk] of stdin.chunks.entries()) {
      if (index > 0) await new Promise((resolve) => setTimeout(resolve, stdin.pauseMs));
      pipe.write(chunk);
    }
    pipe.end();
  }
  return { code: await exited, stdout, stderr };
}

/** The first `[rule]` in a message that is one of the rules. */
function firstRule(message: string): RejectionRule | undefined {
  for (const match of message.matchAll(/\[([a-z-]+)\]/g)) {
    if ((RULES as readonly string[]).includes(match[1]!)) return match[1] as RejectionRule;
  }
  return undefined;
}


function isDeepStrictEqual(a: unknown, b: unknown): boolean {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

function show(verdict: Verdict): string {
  switch (verdict.kind) {
    case 'accepted':
      return `accepted (version ${String(verdict.version)})`;
    case 'rejected':
      return `rejected [${String(verdict.rule)}] ${verdict.message.slice(0, 160)}`;
    case 'too-large':
      return '413';
    case 'error':
      return `${verdict.status !== undefined ? `status ${verdict.status}: ` : ''}${verdict.message.slice(0, 240)}`;
    default:
      return `${verdict.kind}: ${verdict.message.slice(0, 160)}`;
  }
}

function preview(todos: unknown): string {
  const text = JSON.stringify(todos);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return `${error.constructor.name}${code !== undefined ? ` (gRPC code ${String(code)})` : ''}: ${error.message.split('\n')[0]}`;
}

async function inPool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}
