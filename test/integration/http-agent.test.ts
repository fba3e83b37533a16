import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startHttpServer } from '../../src/http/server';
import { MAX_QUEUED_MESSAGES, type SessionSnapshot } from '../../src/session';
import { ANSWERS, MESSAGES, agentTestScript } from '../fixtures/agent-script';
import { ROOT, connectClient, httpCall, uniqueId, useTestBed } from '../helpers';

const WAIT_MS = 30_000;
const bed = useTestBed('http-agent', { allowParallelInProgress: false }, {
  model: { script: agentTestScript() },
  worker: { agent: { apiKey: () => 'scripted', approveTools: ['read_file'], workspace: ROOT } },
  http: { pollMs: 50 },
});

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => httpCall(bed.http.url, method, path, body, headers);
const at = (id: string, suffix = '') => `/sessions/${encodeURIComponent(id)}${suffix}`;

/** Status and code of an error answer, as one string to compare. */
async function codeOf(answer: ReturnType<typeof call>): Promise<string> {
  const { status, json } = await answer;
  return `${status} ${json.code}${json.rule !== undefined ? ` ${json.rule}` : ''}`;
}

/** GET /sessions/{id} until `check` holds. */
async function sessionWhen(id: string, check: (s: SessionSnapshot) => boolean): Promise<SessionSnapshot> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const { status, json } = await call('GET', at(id));
    if (status === 200 && check(json)) return json;
    if (Date.now() > deadline) throw new Error(`the session never got there: ${JSON.stringify(json)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The `session` events of `GET /sessions/{id}/events`, one at a time. */
async function sessionEvents(id: string, signal: AbortSignal): Promise<() => Promise<SessionSnapshot>> {
  const response = await fetch(`${bed.http.url}${at(id, '/events')}`, { signal });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return async () => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end).split('\n');
        buffer = buffer.slice(end + 2);
        if (!block.includes('event: session')) continue;
        return JSON.parse(block.find((line) => line.startsWith('data:'))!.slice(5)) as SessionSnapshot;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended');
      buffer += decoder.decode(value, { stream: true });
    }
  };
}

describe('the agent loop over HTTP', () => {
  test('POST /messages starts a turn (202) and GET /transcript holds every call, result and the answer', { timeout: 60_000 }, async () => {
    const id = uniqueId('http-lint');
    const sent = await call('POST', at(id, '/messages'), { text: MESSAGES.lintFix });
    assert.equal(sent.status, 202, JSON.stringify(sent.json));
    assert.deepEqual(sent.json, { messageId: 1, queued: false, ahead: 0 });
    const done = await sessionWhen(id, (s) => s.agent.lastTurn !== null);
    assert.equal(done.agent.lastTurn?.reason, 'completed');
    assert.equal(done.agent.lastTurn?.answer, ANSWERS.lintFix);
    assert.ok(done.todos?.every((t) => t.status === 'completed'));

    const transcript = await call('GET', at(id, '/transcript'));
    assert.equal(transcript.status, 200);
    assert.deepEqual(transcript.json, await bed.client.transcript(id));
    const results = (transcript.json.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool').map((m) => m.content);
    assert.deepEqual(results, [
      'Updated todo list: 3 pending, 0 in progress, 0 completed',
      'Updated todo list: 1 pending, 1 in progress, 1 completed',
      'Updated todo list: 0 pending, 1 in progress, 2 completed',
      'Updated todo list: 0 pending, 0 in progress, 3 completed',
    ]);

    const usage = await call('GET', at(id, '/usage'));
    assert.equal(usage.status, 200);
    assert.deepEqual(Object.keys(usage.json), ['session', 'tree']);
    assert.equal(usage.json.session.model_calls, 5);
    assert.deepEqual(usage.json.tree, usage.json.session);
    assert.deepEqual(done.usage, usage.json.session, 'the session query carries the same usage');
  });

  test('the event stream sends a session event for each step of a turn, not only when the version moves', { timeout: 60_000 }, async () => {
    const id = uniqueId('http-sse-agent');
    assert.equal((await call('POST', at(id, '/messages'), { text: MESSAGES.approve })).status, 202);
    const controller = new AbortController();
    const next = await sessionEvents(id, controller.signal);
    const seen: SessionSnapshot[] = [];
    let waiting: SessionSnapshot | undefined;
    while (waiting === undefined) {
      const event = await next();
      seen.push(event);
      if (event.agent.pendingApprovals.length > 0) waiting = event;
    }
    const [pending] = waiting.agent.pendingApprovals;
    assert.equal(pending?.name, 'read_file');
    assert.equal(waiting.agent.activity.state, 'waiting-approval');

    const approved = await call('POST', at(id, `/approvals/${encodeURIComponent(pending!.callId)}/approve`));
    assert.equal(approved.status, 200, JSON.stringify(approved.json));
    assert.deepEqual(approved.json, { callId: pending!.callId, decision: 'approved' });
    for (let event = await next(); ; event = await next()) {
      seen.push(event);
      if (event.agent.lastTurn !== null) break;
    }
    controller.abort();
    assert.equal(seen.at(-1)!.agent.lastTurn?.answer, ANSWERS.approve);
    const revisions = seen.map((s) => s.agent.revision);
    assert.deepEqual(revisions, [...revisions].sort((a, b) => a - b), 'revisions only grow');
    // An event comes when the version or the agent's revision moves (a signal such as turn/start
    // can move the version in a workflow task of its own), so each pair of neighbours differs in one.
    const marks = seen.map((s) => `${s.version}/${s.agent.revision}`);
    assert.equal(new Set(marks).size, marks.length, `each event says something new: ${JSON.stringify(marks)}`);
    assert.ok(
      seen.some((s, i) => i > 0 && s.version === seen[i - 1]!.version && s.agent.revision !== seen[i - 1]!.agent.revision),
      `an event came for a step that left the version alone: ${JSON.stringify(seen.map((s) => [s.version, s.agent.revision, s.agent.activity.state]))}`,
    );
  });

  test('deny takes an optional reason that the model reads; approve and deny of a call nobody waits for are 422', { timeout: 60_000 }, async () => {
    const id = uniqueId('http-deny');
    await call('POST', at(id, '/messages'), { text: MESSAGES.deny });
    const waiting = await sessionWhen(id, (s) => s.agent.pendingApprovals.length > 0);
    const callId = waiting.agent.pendingApprovals[0]!.callId;
    assert.equal(await codeOf(call('POST', at(id, `/approvals/${encodeURIComponent(callId)}/deny`), { reason: 5 })), '400 invalid-input');
    assert.equal(await codeOf(call('POST', at(id, `/approvals/${encodeURIComponent(callId)}/deny`), { reason: 'no', extra: true })), '400 invalid-input');
    assert.equal(await codeOf(call('POST', at(id, '/approvals/call_nobody_made/approve'))), '422 rejected no-pending-call');
    const denied = await call('POST', at(id, `/approvals/${encodeURIComponent(callId)}/deny`), { reason: 'not this file' });
    assert.equal(denied.status, 200, JSON.stringify(denied.json));
    assert.deepEqual(denied.json, { callId, decision: 'denied' });
    const done = await sessionWhen(id, (s) => s.agent.lastTurn !== null);
    assert.equal(done.agent.lastTurn?.answer, ANSWERS.deny);
    const { json } = await call('GET', at(id, '/transcript'));
    assert.ok((json.messages as Array<{ role: string; content: string }>).some((m) => m.role === 'tool' && m.content === 'the call was denied by a person: not this file'));
    assert.equal(await codeOf(call('POST', at(id, `/approvals/${encodeURIComponent(callId)}/deny`))), '422 rejected no-pending-call', 'decided once');
  });

  test('a message sent while a turn runs answers queued: true, and POST /interrupt ends the running turn', { timeout: 60_000 }, async () => {
    const id = uniqueId('http-interrupt');
    assert.equal(await codeOf(call('POST', at(id, '/interrupt'))), '404 session-not-found');
    await call('POST', at(id, '/messages'), { text: MESSAGES.forever });
    await sessionWhen(id, (s) => s.agent.activity.state === 'calling-model');
    const queued = await call('POST', at(id, '/messages'), { text: 'Next, please' });
    assert.equal(queued.status, 202);
    assert.deepEqual(queued.json, { messageId: 2, queued: true, ahead: 1 });
    assert.equal((await call('GET', at(id))).json.agent.queued, 1);

    const interrupted = await call('POST', at(id, '/interrupt'));
    assert.equal(interrupted.status, 200, JSON.stringify(interrupted.json));
    assert.equal(interrupted.json.messageId, 1);
    assert.equal(interrupted.json.reason, 'interrupted');
    assert.equal(interrupted.json.answer, null);
    // The queued message runs next (the interrupted turn left no answer, so the script waits again).
    await sessionWhen(id, (s) => s.agent.activity.state === 'calling-model' && s.turn === 2);
    const second = await call('POST', at(id, '/interrupt'));
    assert.equal(second.json.messageId, 2);
    assert.equal(second.json.reason, 'interrupted');
    assert.equal(await codeOf(call('POST', at(id, '/interrupt'))), '422 rejected no-running-turn');
  });

  test('at most 10 messages wait behind a running turn: the next is 422 queue-full and leaves the queue as it was', { timeout: 60_000 }, async () => {
    const id = uniqueId('http-queue-full');
    await call('POST', at(id, '/messages'), { text: MESSAGES.forever });
    await sessionWhen(id, (s) => s.agent.activity.state === 'calling-model');
    for (let i = 1; i <= MAX_QUEUED_MESSAGES; i++) {
      const queued = await call('POST', at(id, '/messages'), { text: `Then step ${i}` });
      assert.deepEqual(queued.json, { messageId: i + 1, queued: true, ahead: i });
    }
    const refused = await call('POST', at(id, '/messages'), { text: 'One more' });
    assert.equal(refused.status, 422);
    assert.equal(refused.json.rule, 'queue-full');
    assert.match(refused.json.error, /10 messages already wait for their turn \(the limit is 10\); send this one after a turn ends, or interrupt the running turn/);
    assert.equal((await call('GET', at(id))).json.agent.queued, MAX_QUEUED_MESSAGES);
    await bed.client.close(id);
  });

  test('refused messages name the rule; bodies that are not {"text"} are 400; a closed session is 409', { timeout: 60_000 }, async () => {
    const id = uniqueId('http-refused');
    assert.equal(await codeOf(call('POST', at(id, '/messages'), { text: '  ' })), '422 rejected empty-message');
    assert.equal(await codeOf(call('POST', at(id, '/messages'), { text: 'x'.repeat(32_001) })), '422 rejected message-too-long');
    assert.equal(await codeOf(call('POST', at(id, '/messages'), { text: 5 })), '400 invalid-input');
    assert.equal(await codeOf(call('POST', at(id, '/messages'), { text: 'hi', role: 'system' })), '400 invalid-input');
    assert.equal(await codeOf(call('POST', at(id, '/messages'), '{"text": ')), '400 invalid-input');
    const wrongType = await httpCall(bed.http.url, 'POST', at(id, '/messages'), 'text=hi', { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(wrongType.status, 415);
    const refused = await call('POST', at(id, '/messages'), { text: '' });
    assert.match(refused.json.error, /the message is empty; say what the agent should do/);

    await bed.client.start(id);
    await bed.client.close(id);
    assert.equal(await codeOf(call('POST', at(id, '/messages'), { text: 'anything' })), '409 session-closed');
    const transcript = await call('GET', at(id, '/transcript'));
    assert.equal(transcript.status, 200);
    assert.deepEqual(transcript.json.messages, [], 'nothing refused reached the conversation');
    assert.equal(await codeOf(call('GET', at(uniqueId('nobody'), '/transcript'))), '404 session-not-found');
  });

  test('a message with no answer in time is 504 outcome-unknown: it may still be accepted', { timeout: 60_000 }, async () => {
    const unserved = await connectClient(uniqueId('no-worker-here'));
    const slow = await startHttpServer({ client: unserved, port: 0, temporalTimeoutMs: 400 });
    try {
      const answer = await httpCall(slow.url, 'POST', at(uniqueId('http-unserved'), '/messages'), { text: 'Hello?' });
      assert.equal(answer.status, 504, JSON.stringify(answer.json));
      assert.equal(answer.json.code, 'outcome-unknown');
    } finally {
      await slow.close();
      await unserved.closeConnection();
    }
  });

  test('the OpenAPI document declares every agent endpoint with its answers', async () => {
    const { json } = await call('GET', '/openapi.json');
    const expected: Record<string, [string, string[]]> = {
      '/sessions/{id}/messages': ['post', ['202', '409', '422', '504']],
      '/sessions/{id}/transcript': ['get', ['200']],
      '/sessions/{id}/usage': ['get', ['200']],
      '/sessions/{id}/interrupt': ['post', ['200', '409', '422', '504']],
      '/sessions/{id}/approvals/{callId}/approve': ['post', ['200', '409', '422', '504']],
      '/sessions/{id}/approvals/{callId}/deny': ['post', ['200', '409', '422', '504']],
    };
    for (const [path, [method, statuses]] of Object.entries(expected)) {
      const operation = json.paths[path]?.[method];
      assert.ok(operation, `${method.toUpperCase()} ${path} is documented`);
      for (const status of [...statuses, '400', '404']) assert.ok(operation.responses[status], `${path} documents ${status}`);
    }
    assert.deepEqual(Object.keys(json.components.schemas.Usage.properties).sort(), ['completion_tokens', 'model_calls', 'output_chars', 'prompt_tokens', 'todo_write_chars', 'total_tokens']);
    assert.ok(json.components.schemas.Session.properties.agent, 'the session schema shows the agent status');
    assert.equal(json.paths['/sessions/{id}/messages'].post.requestBody.content['application/json'].schema.$ref, '#/components/schemas/UserMessage');
  });
});
