import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, test, type TestContext } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { SessionClient } from '../../src/client';
import { startHttpServer, type HttpServer } from '../../src/http/server';
import { startModelServer, type ModelServer, type ScriptJson } from '../../src/model-server';
import type { TodoItem, TodoPolicy } from '../../src/todo';
import { ANSWERS, MESSAGES, RELEASE_LIST, agentTestScript } from '../fixtures/agent-script';
import { ROOT, connectClient, runTemporalCli, startWorker, testStreamStore, todo, uniqueId, type TestWorker } from '../helpers';
import { inMemoryTracing } from '../tracing-helpers';
import { CHROMIUM, LAUNCH_ARGS, VIEWPORT, ensureChromium } from './chromium';

const WAIT_MS = 20_000;
const OUTPUT_DIR = process.env.TEST_OUTPUT_DIR ?? join(ROOT, 'test-output');

const policy: TodoPolicy = { allowParallelInProgress: true };
const taskQueue = uniqueId('dashboard');
const token = `token-${randomUUID()}`;

let skipReason: string | undefined;
let model: ModelServer | undefined;
let worker: TestWorker | undefined;
let client: SessionClient | undefined;
let server: HttpServer | undefined;
let tokenServer: HttpServer | undefined;
/** A service whose client traces and which names where traces open: its turns link to their trace. */
let tracedServer: HttpServer | undefined;
let tracedClient: SessionClient | undefined;
const TRACE_URL = 'http://127.0.0.1:16686/trace/{traceId}';
let browser: Browser | undefined;
const contexts: BrowserContext[] = [];

before(async () => {
  skipReason = await ensureChromium();
  if (skipReason !== undefined) return;
  // The agent loop's model is scripted (test/fixtures/agent-script.ts); read_file waits for a person.
  // Streamed at a pace a person can watch, so the growing answer can be seen growing.
  model = await startModelServer({ script: withStory(withHostileConversation(agentTestScript())), streaming: { tokensPerSecond: 40 } });
  worker = await startWorker(policy, taskQueue, { agent: { baseUrl: model.url, apiKey: () => 'scripted', approveTools: ['read_file'], workspace: ROOT } });
  client = await connectClient(taskQueue);
  server = await startHttpServer({ port: 0, host: '127.0.0.1', client, policy, streamStore: testStreamStore() });
  tokenServer = await startHttpServer({ port: 0, host: '127.0.0.1', client, policy, token, streamStore: testStreamStore() });
  const { tracing } = inMemoryTracing();
  tracedClient = await connectClient(taskQueue, { plugins: [tracing.clientPlugin] });
  tracedServer = await startHttpServer({ port: 0, host: '127.0.0.1', client: tracedClient, policy, tracing, traceUrl: TRACE_URL, streamStore: testStreamStore() });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS });
});

// Each test's pages are closed when it ends: a live page left open keeps its connections to the
// service and animates its in-progress marks (software-rendered here), and a dozen of them took
// both cores of a 2-core machine, so later tests ran out of time waiting for their own pages.
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close().catch(() => undefined)));
});

after(async () => {
  await Promise.all(contexts.map((context) => context.close().catch(() => undefined)));
  await browser?.close();
  await server?.close();
  await tokenServer?.close();
  await tracedServer?.close();
  await tracedClient?.closeConnection();
  await client?.closeConnection();
  await worker?.stop();
  await model?.close();
});

/** What a hostile model and user send: markup that would run script if it ever became HTML. */
const HOSTILE = Object.freeze({
  message: '<img src=x onerror="window.__pwned=1;alert(1)">',
  todoContent: '<script>window.__pwned=2</script>',
  answer: '<b onmouseover="window.__pwned=3">bold</b><iframe src="javascript:alert(3)"></iframe>',
});

/**
 * The front ends' script plus one conversation whose every text is markup: the user's message,
 * a todo_write item and the final answer.
 */
function withHostileConversation(script: ScriptJson): ScriptJson {
  const exact = `^${HOSTILE.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
  return {
    ...script,
    conversations: [
      ...script.conversations,
      {
        name: 'hostile',
        match: { firstUserMessage: exact },
        steps: [
          { respond: { content: HOSTILE.answer, tool_calls: [{ name: 'todo_write', arguments: { todos: [{ content: HOSTILE.todoContent, status: 'in_progress' }] } }] } },
          { note: 'Ends the turn with the item open: the loop reminds it.', expect: { lastMessage: { role: 'tool', contentMatches: '^Updated todo list' } }, respond: { content: HOSTILE.answer } },
          { expect: { lastMessage: { role: 'user', contentMatches: 'still open' } }, respond: { content: HOSTILE.answer } },
        ],
      },
    ],
  };
}

/** A long answer (almost two seconds of words at 40 tokens a second), to watch the conversation grow. */
const STORY = Object.freeze({
  message: 'Tell me how the release went',
  answer: 'The release went out on Tuesday. The invoice export shipped behind a flag, the migrations ran in four minutes, and nobody was paged. '.repeat(2).trim(),
});

function withStory(script: ScriptJson): ScriptJson {
  return { ...script, conversations: [...script.conversations, { name: 'story', match: { firstUserMessage: `^${STORY.message}$` }, steps: [{ respond: { content: STORY.answer } }] }] };
}

/** Skips the test (with the reason) when Chromium could not be had; else the running parts. */
function ready(t: TestContext): { client: SessionClient; server: HttpServer; tokenServer: HttpServer; browser: Browser } | undefined {
  if (skipReason !== undefined) {
    t.skip(skipReason);
    return undefined;
  }
  assert.ok(client && server && tokenServer && browser, 'the set-up did not finish');
  return { client, server, tokenServer, browser };
}

/** A page at 1280x800 that records dialogs, uncaught errors, CSP violations and loads. */
async function openPage(target: Browser, url: string) {
  const context = await target.newContext({ viewport: VIEWPORT });
  contexts.push(context);
  const page = await context.newPage();
  const seen = { dialogs: [] as string[], errors: [] as string[], loads: 0 };
  page.on('dialog', (dialog) => {
    seen.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => undefined);
  });
  page.on('pageerror', (error) => seen.errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Uncaught/i.test(message.text())) seen.errors.push(message.text());
  });
  page.on('load', () => (seen.loads += 1));
  // The dashboard is a set of ES modules: one the server does not serve would fail silently.
  page.on('response', (response) => {
    if (response.status() >= 400 && ['script', 'stylesheet', 'document'].includes(response.request().resourceType())) {
      seen.errors.push(`${response.status()} for ${response.url()}`);
    }
  });
  await page.goto(url);
  return { page, seen };
}

const sessionUrl = (base: string, id: string) => `${base}/#/sessions/${encodeURIComponent(id)}`;

/** Starts a new session and opens its page on the open service, once the page says it is live. */
async function openLiveSession(parts: NonNullable<ReturnType<typeof ready>>, prefix: string, input: { task?: string } = {}) {
  const id = uniqueId(prefix);
  await parts.client.start(id, input);
  const opened = await openPage(parts.browser, sessionUrl(parts.server.url, id));
  await eventually(async () => assert.equal(await opened.page.locator('#connection').textContent(), 'Live'));
  return { id, ...opened };
}

/** Types `text` into the page's message box and presses Send. */
async function sendMessage(page: Page, text: string): Promise<void> {
  await page.locator('#message-input').fill(text);
  await page.locator('#message-send').click();
}

/** The page loaded once (no reload, no navigation away) and logged no error. */
function assertCleanPage(seen: { loads: number; errors: string[] }): void {
  assert.equal(seen.loads, 1);
  assert.deepEqual(seen.errors, []);
}

/** `POST /sessions/{id}/todo_write` as any HTTP client would. */
async function write(base: string, id: string, todos: TodoItem[], bearer?: string): Promise<{ version: number }> {
  const response = await fetch(`${base}/sessions/${encodeURIComponent(id)}/todo_write`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(bearer !== undefined ? { Authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify({ todos }),
  });
  const body = (await response.json()) as { version: number; error?: string };
  assert.equal(response.status, 200, body.error);
  return body;
}

/** Sends signal `name` to session `id` with the real `temporal` CLI, as any Temporal client could. */
async function signal(id: string, name: string, input?: unknown): Promise<void> {
  const args = ['workflow', 'signal', '--workflow-id', id, '--name', name, ...(input !== undefined ? ['--input', JSON.stringify(input)] : [])];
  const sent = await runTemporalCli(args);
  assert.equal(sent.code, 0, sent.stderr);
}

/** The session's `ignoredSignals` once GET /sessions/{id} lists `count` of them. */
async function ignoredSignalsOf(base: string, id: string, count: number): Promise<Array<{ name: string; at: string | null; reason: string }>> {
  let listed: Array<{ name: string; at: string | null; reason: string }> = [];
  await eventually(async () => {
    const body = (await (await fetch(`${base}/sessions/${encodeURIComponent(id)}`)).json()) as { ignoredSignals?: typeof listed };
    listed = body.ignoredSignals ?? [];
    assert.equal(listed.length, count, `GET /sessions/{id} lists ${listed.length} ignored signals`);
  });
  return listed;
}

/** Retries `check` until it stops throwing, or throws its last failure after `ms`. */
async function eventually(check: () => Promise<void>, ms = WAIT_MS): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** The list the page shows: each `#todos > li`'s status and its `.content` text. */
function shownList(page: Page): Promise<TodoItem[]> {
  return page
    .locator('#todos > li')
    .evaluateAll((items) => items.map((li) => ({ content: li.querySelector('.content')?.textContent ?? '', status: li.getAttribute('data-status') }))) as Promise<TodoItem[]>;
}

async function waitForList(page: Page, expected: TodoItem[]): Promise<void> {
  await eventually(async () => assert.deepEqual(await shownList(page), expected));
}

describe('the live dashboard', () => {
  test('a session page shows a list written through the API without reloading', { timeout: 60_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const id = uniqueId('live');
    const first = [todo('Read the issue', 'in_progress'), todo('Write the fix')];
    await write(parts.server.url, id, first);
    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.server.url, id));
    await waitForList(page, first);
    await eventually(async () => assert.equal(await page.locator('#connection').textContent(), 'Live'));
    await page.evaluate('window.__dashboardMarker = "still the same page"');
    const versionBefore = Number(await page.locator('#version').textContent());

    const second = [todo('Read the issue', 'completed'), todo('Write the fix', 'in_progress'), todo('Run the tests')];
    const { version } = await write(parts.server.url, id, second);
    await waitForList(page, second);
    await eventually(async () => assert.equal(await page.locator('#version').textContent(), String(version)));
    assert.ok(version > versionBefore);
    assert.equal(await page.evaluate('window.__dashboardMarker'), 'still the same page', 'the page was reloaded');
    assert.equal(seen.loads, 1, 'the page loaded more than once');
    assert.equal(await page.locator('#todos li[data-status="in_progress"] .content').textContent(), 'Write the fix');
    assert.deepEqual(seen.errors, []);
  });

  test('todo content that looks like HTML is shown as text and runs nothing', { timeout: 60_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const id = uniqueId('xss');
    const payload = '<img src=x onerror=alert(1)>';
    const scriptish = '<script>alert(2)</script>';
    const list = [todo(payload, 'in_progress'), todo(scriptish), todo('a "quoted" & <b>bold</b> one', 'completed')];
    await write(parts.server.url, id, list);
    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.server.url, id));
    await waitForList(page, list);
    // Give any injected handler a moment to fire before asserting it did not.
    await page.waitForTimeout(300);
    assert.deepEqual(seen.dialogs, [], 'a dialog opened: markup from a todo ran');
    assert.equal(await page.locator('#todos img, #todos script, #todos b').count(), 0);
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await page.locator('#todos li .content').first().textContent(), payload);
    assert.equal(await page.locator('#todos li .content').nth(1).textContent(), scriptish);
    assert.deepEqual(seen.errors, []);
  });

  test('with a token configured the page asks for it and then shows the list', { timeout: 60_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const id = uniqueId('token');
    const list = [todo('Rotate the keys', 'in_progress'), todo('Tell the team')];
    await write(parts.tokenServer.url, id, list, token);
    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.tokenServer.url, id));
    await page.locator('#token-form').waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(await page.locator('#todos').count(), 0, 'the list showed before a token was given');

    await page.locator('#token-input').fill('not-the-token');
    await page.locator('#token-form button[type="submit"]').click();
    await eventually(async () => assert.match((await page.locator('#token-error').textContent()) ?? '', /not accepted/));

    await page.locator('#token-input').fill(token);
    await page.locator('#token-form button[type="submit"]').click();
    await waitForList(page, list);
    assert.equal(await page.locator('#token-form').count(), 0);
    assert.equal(await page.evaluate('sessionStorage.getItem("agent-sessions.token")'), token);

    // The live stream carries the token too: a later write arrives without a reload.
    const next = [todo('Rotate the keys', 'completed'), todo('Tell the team', 'in_progress')];
    await write(parts.tokenServer.url, id, next, token);
    await waitForList(page, next);
    assertCleanPage(seen);
  });

  test('the dashboard modules load without a token, as JavaScript, under the same Content-Security-Policy', { timeout: 60_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const context = await parts.browser.newContext({ viewport: VIEWPORT });
    contexts.push(context);
    const page = await context.newPage();
    const scripts: Array<{ url: string; status: number; headers: Record<string, string> }> = [];
    page.on('response', (response) => {
      if (response.request().resourceType() === 'script') scripts.push({ url: response.url(), status: response.status(), headers: response.headers() });
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${parts.tokenServer.url}/`);
    await page.locator('#token-form').waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.ok(scripts.length > 1, `expected the entry module and its imports, got ${JSON.stringify(scripts.map((s) => s.url))}`);
    assert.ok(scripts.some((s) => s.url.endsWith('/js/main.js')));
    for (const script of scripts) {
      assert.equal(script.status, 200, script.url);
      assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8', script.url);
      assert.equal(script.headers['x-content-type-options'], 'nosniff', script.url);
      assert.match(script.headers['content-security-policy'] ?? '', /default-src 'self'/, script.url);
    }
    const meta = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
    assert.match(meta ?? '', /script-src 'self';/);
    assert.deepEqual(errors, []);
  });

  test('signals the session ignored are listed by name, time and full reason, as text', { timeout: 60_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const id = uniqueId('ignored');
    const list = [todo('Plan the work', 'in_progress')];
    await write(parts.server.url, id, list);
    // The mistake this section exists for: a model's todo_write sent as a Signal, not the Update.
    await signal(id, 'todo_write', { todos: [{ content: '<b>not a write</b>', status: 'pending' }] });
    const [listed] = await ignoredSignalsOf(parts.server.url, id, 1);

    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.server.url, id));
    await waitForList(page, list);
    const section = page.locator('#ignored-signals');
    await section.waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(await page.locator('#ignored-title').textContent(), 'Ignored signals (1)');
    const entry = section.locator('li.ignored-signal');
    assert.equal(await entry.count(), 1);
    assert.equal(await entry.locator('.ignored-name').textContent(), 'todo_write');
    assert.equal(await entry.locator('time').getAttribute('datetime'), new Date(listed!.at!).toISOString());
    const reason = (await entry.locator('.ignored-reason').textContent()) ?? '';
    assert.match(reason, /Update/);
    assert.equal(reason, listed!.reason, 'the reason is not shown in full');
    // Ignored means ignored: the list is unchanged, and the sender's text made no markup.
    assert.deepEqual(await shownList(page), list);
    assert.equal(await section.locator('b').count(), 0);
    assert.deepEqual(seen.errors, []);
  });

  test('a signal ignored while the page is open is listed without a reload, its name shown as text', { timeout: 60_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const id = uniqueId('ignored-live');
    const list = [todo('Plan the work', 'in_progress')];
    await write(parts.server.url, id, list);
    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.server.url, id));
    await waitForList(page, list);
    assert.equal(await page.locator('#ignored-signals').isVisible(), false, 'the section shows with nothing ignored');

    const name = '<img src=x onerror=alert(1)>';
    await signal(id, name);
    await ignoredSignalsOf(parts.server.url, id, 1);
    // Listing an ignored signal leaves the version alone: the page must hear of it all the same.
    await eventually(async () => assert.equal(await page.locator('#ignored-title').textContent(), 'Ignored signals (1)'));
    assert.equal(await page.locator('#ignored-signals').isVisible(), true);
    assert.equal(await page.locator('#ignored-signals .ignored-name').textContent(), name);
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(seen.loads, 1);
    assert.deepEqual(seen.dialogs, []);
    assert.deepEqual(seen.errors, []);
  });

  test('the history slider moved to the first write shows that earlier list', { timeout: 60_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const id = uniqueId('history');
    const lists = [
      [todo('Plan', 'in_progress')],
      [todo('Plan', 'completed'), todo('Build', 'in_progress')],
      [todo('Plan', 'completed'), todo('Build', 'completed'), todo('Ship', 'in_progress')],
    ];
    await parts.client.start(id);
    await parts.client.turnStart(id);
    for (const list of lists) await write(parts.server.url, id, list);
    const latest = lists[2]!;

    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.server.url, id));
    await waitForList(page, latest);
    const response = await fetch(`${parts.server.url}/sessions/${encodeURIComponent(id)}/timeline`);
    const { steps } = (await response.json()) as { steps: Array<{ type: string; todos: TodoItem[] | null }> };
    const firstWrite = steps.findIndex((step) => step.type === 'todo/write');
    assert.ok(firstWrite > 0, `the timeline starts with a turn: ${JSON.stringify(steps.map((s) => s.type))}`);
    const slider = page.locator('#history-slider');
    await eventually(async () => assert.equal(await slider.getAttribute('max'), String(steps.length - 1)));
    assert.equal(await slider.inputValue(), String(steps.length - 1), 'the slider starts at the live end');

    await slider.fill(String(firstWrite));
    await waitForList(page, lists[0]!);
    const caption = (await page.locator('#history-step').textContent()) ?? '';
    assert.match(caption, /todo\/write/);
    assert.match(caption, new RegExp(`step ${firstWrite + 1} of ${steps.length}`));

    // While looking back, a new write does not move the view; "Live" returns to it.
    const newest = [...latest.slice(0, 2), todo('Ship', 'completed')];
    await write(parts.server.url, id, newest);
    await eventually(async () => assert.match((await page.locator('#history-live').textContent()) ?? '', /new changes/));
    assert.deepEqual(await shownList(page), lists[0]);
    await page.locator('#history-live').click();
    await waitForList(page, newest);
    await eventually(async () => assert.equal(await slider.getAttribute('max'), String(steps.length)));
    assert.deepEqual(seen.errors, []);
  });

  test('Fork… on the history forks at the event shown, asks for the new id, and opens the new session', { timeout: 90_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const id = uniqueId('fork-source');
    const lists = [[todo('Plan', 'in_progress')], [todo('Plan', 'completed'), todo('Build', 'in_progress')]];
    await parts.client.start(id);
    await parts.client.turnStart(id);
    for (const list of lists) await write(parts.server.url, id, list);

    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.server.url, id));
    await waitForList(page, lists[1]!);
    const { steps } = (await (await fetch(`${parts.server.url}/sessions/${encodeURIComponent(id)}/timeline`)).json()) as { steps: Array<{ type: string; eventId: number; runId: string }> };
    const firstWrite = steps.findIndex((step) => step.type === 'todo/write');
    const slider = page.locator('#history-slider');
    await eventually(async () => assert.equal(await slider.getAttribute('max'), String(steps.length - 1)));
    await slider.fill(String(firstWrite));
    await waitForList(page, lists[0]!);

    await page.locator('#history-fork').click();
    assert.match((await page.locator('#fork-where').textContent()) ?? '', new RegExp(`Fork at event ${steps[firstWrite]!.eventId} \\(todo/write`));
    await page.locator('#fork-id').fill(id);
    await page.locator('#fork-submit').click();
    await eventually(async () => assert.match((await page.locator('#fork-status').textContent()) ?? '', /Not forked: session "[^"]+" already exists/));

    const newId = uniqueId('forked');
    await page.locator('#fork-id').fill(newId);
    await page.locator('#fork-submit').click();
    await eventually(async () => assert.equal(new URL(page.url()).hash, `#/sessions/${encodeURIComponent(newId)}`));
    await waitForList(page, lists[0]!);
    const forked = await parts.client.session(newId);
    assert.deepEqual(forked.forkedFrom, { id, runId: steps[firstWrite]!.runId, eventId: steps[firstWrite]!.eventId });
    assert.deepEqual(await parts.client.todos(id), lists[1], 'the source is not touched');
    assert.deepEqual(seen.errors, []);
  });

  test('the sessions page lists sessions with status, parent and counts, linking to their pages', { timeout: 60_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const parent = uniqueId('listed');
    await write(parts.server.url, parent, [todo('One', 'completed'), todo('Two', 'in_progress'), todo('Three')]);
    const { sessionId: child } = await parts.client.spawnSubagent(parent, { name: 'helper', task: 'help' });
    const { page, seen } = await openPage(parts.browser, `${parts.server.url}/#/`);
    const row = page.locator(`#sessions tr[data-id="${child}"]`);
    await row.waitFor({ timeout: WAIT_MS });
    assert.match((await row.textContent()) ?? '', new RegExp(`${parent}.*Running`));
    const parentRow = page.locator(`#sessions tr[data-id="${parent}"]`);
    assert.match((await parentRow.textContent()) ?? '', /1\/3 done · 1 in progress/);
    await row.locator('a').first().click();
    await eventually(async () => assert.equal(await page.locator('.session-id').textContent(), child));
    assert.equal(await page.locator('#parent a').textContent(), parent);
    assert.deepEqual(seen.errors, []);
  });

  test("a message sent from the page's box runs the lint fix live: the list reaches all completed and the answer appears", { timeout: 90_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    // No session yet: the page says so and offers the box, whose first message starts it.
    const id = uniqueId('chat-page');
    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.server.url, id));
    await page.locator('#start-card #message-input').waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.match((await page.locator('#problem').textContent()) ?? '', /not found|no session/i);

    await sendMessage(page, MESSAGES.lintFix);
    await eventually(async () => assert.match((await page.locator('#message-status').textContent()) ?? '', /Message 1 sent/));
    assert.equal(await page.locator('#message-input').inputValue(), '', 'the box is cleared once the message is accepted');
    await page.locator('#start-card').waitFor({ state: 'detached', timeout: WAIT_MS });
    assert.equal(await page.locator('.conversation-card #message-form').count(), 1, 'the box moved into the conversation');
    await eventually(async () => assert.equal(await page.locator('#connection').textContent(), 'Live'));
    const done = [todo('Run lint', 'completed'), todo('Fix the errors', 'completed'), todo('Re-run lint', 'completed')];
    await waitForList(page, done);
    await eventually(async () => assert.equal(await page.locator('#conversation .msg-answer .msg-text').textContent(), ANSWERS.lintFix));
    assert.equal(await page.locator('#conversation .msg-user .msg-text').textContent(), MESSAGES.lintFix);
    const calls = page.locator('#conversation li.tool-call[data-tool="todo_write"]');
    assert.equal(await calls.count(), 4);
    // A todo_write's arguments are shown as the list it sends, with each status.
    assert.deepEqual(
      await calls.nth(1).locator('.tool-todos li').evaluateAll((items) => items.map((li) => [li.getAttribute('data-status'), li.querySelector('.tool-todo-content')?.textContent])),
      [['completed', 'Run lint'], ['in_progress', 'Fix the errors'], ['pending', 'Re-run lint']],
    );
    assert.equal(await calls.last().locator('.tool-result pre').textContent(), 'Updated todo list: 0 pending, 0 in progress, 3 completed');
    assert.equal(await page.locator('#conversation li.tool-call.rejected').count(), 0);
    await eventually(async () => assert.equal(await page.locator('#turn-outcome').textContent(), 'Turn 1 (message 1) completed'));
    await eventually(async () => assert.equal(await page.locator('#usage tr[data-field="model_calls"] .usage-session').textContent(), '5'));
    assert.notEqual(await page.locator('#usage tr[data-field="todo_write_chars"] .usage-session').textContent(), '0');
    assert.equal(await page.locator('#interrupt').isVisible(), false, 'no Interrupt once the turn is over');
    assert.equal(seen.loads, 1, 'the page was never reloaded');
    assert.deepEqual(seen.errors, []);
  });

  test("a traced turn names its trace, linked to the trace backend the service names", { timeout: 60_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    assert.ok(tracedServer !== undefined && tracedClient !== undefined);
    const id = uniqueId('traced-page');
    const { page, seen } = await openPage(parts.browser, sessionUrl(tracedServer.url, id));
    await sendMessage(page, MESSAGES.lintFix);
    const link = page.locator('#turn-outcome a.turn-trace');
    await link.waitFor({ state: 'visible', timeout: WAIT_MS });
    const traceId = (await tracedClient.transcript(id)).lastTurn?.traceId;
    assert.match(traceId ?? '', /^[0-9a-f]{32}$/);
    assert.equal(await link.getAttribute('href'), TRACE_URL.replace('{traceId}', traceId!));
    assert.equal(await link.getAttribute('target'), '_blank');
    assert.equal(await link.textContent(), `trace ${traceId!.slice(0, 8)}\u2026`);
    assert.match((await page.locator('#turn-outcome').textContent()) ?? '', /^Turn 1 \(message 1\) completed · trace [0-9a-f]{8}…$/);
    // The same turn on a service with no trace URL: the id alone, no link.
    const plain = await openPage(parts.browser, sessionUrl(parts.server.url, id));
    await plain.page.locator('#turn-outcome code.turn-trace').waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(await plain.page.locator('#turn-outcome a').count(), 0);
    assertCleanPage(seen);
  });

  test('a todo_write the session refused is marked rejected, and a waiting call is approved from the page', { timeout: 90_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const { page, seen } = await openLiveSession(parts, 'approve-page', { task: 'Ship the invoice export' });
    await page.locator('#message-input').fill(MESSAGES.release);
    await page.locator('#message-input').press('Control+Enter');

    const approvals = page.locator('#approvals');
    await approvals.waitFor({ state: 'visible', timeout: WAIT_MS });
    const waiting = approvals.locator('li.approval');
    assert.equal(await waiting.count(), 1);
    assert.equal(await waiting.locator('.tool-name').textContent(), 'read_file');
    assert.match((await waiting.locator('.tool-args').textContent()) ?? '', /"path": "README.md"/);
    await waitForList(page, [...RELEASE_LIST]);
    const rejected = page.locator('#conversation li.tool-call.rejected');
    await eventually(async () => assert.equal(await rejected.count(), 1));
    assert.equal(await rejected.locator('.badge-rejected').textContent(), 'Rejected');
    assert.match((await rejected.locator('.tool-result pre').textContent()) ?? '', /^todo_write rejected: .*\[duplicate-content\]/s);
    assert.equal(await page.locator('#conversation li.tool-call:not(.rejected) .badge-rejected').count(), 0, 'accepted writes are not marked');
    await eventually(async () => assert.match((await page.locator('#conversation li.tool-call[data-tool="read_file"] .tool-waiting').textContent()) ?? '', /Waiting for a person/));
    assert.equal(await page.locator('#interrupt').isVisible(), true, 'Interrupt shows while the turn runs');
    assert.match((await page.locator('#agent-activity').textContent()) ?? '', /waiting for approval/);

    await waiting.locator('button.approve').click();
    await approvals.waitFor({ state: 'hidden', timeout: WAIT_MS });
    await eventually(async () => assert.equal(await page.locator('#conversation .msg-answer .msg-text').textContent(), ANSWERS.release));
    assert.match((await page.locator('#conversation li.tool-call[data-tool="read_file"] .tool-result pre').textContent()) ?? '', /^# agent-sessions/);
    await waitForList(page, RELEASE_LIST.map((item) => todo(item.content, 'completed')));
    assertCleanPage(seen);
  });

  test('a running turn is interrupted from the page: the model call ends, the turn says interrupted, and Interrupt goes away', { timeout: 90_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const { id, page, seen } = await openLiveSession(parts, 'interrupt-page');
    assert.equal(await page.locator('#conversation-empty').isVisible(), true, 'a fresh session says it has no messages');
    assert.equal(await page.locator('#interrupt').isVisible(), false, 'no Interrupt while nothing runs');

    // The "forever" story's model call answers only after ten minutes: only an interrupt ends it.
    await sendMessage(page, MESSAGES.forever);
    await eventually(async () => assert.match((await page.locator('#agent-activity').textContent()) ?? '', /^calling the model \(turn \d+, step 1\)$/));
    // A list written in this turn (by another writer, as the model has not answered): the interrupt keeps it.
    const list = [todo('Think it through', 'in_progress'), todo('Write it down')];
    await parts.client.todoWrite(id, { todos: list });
    await waitForList(page, list);
    await page.locator('#interrupt').click();
    await eventually(async () => assert.match((await page.locator('#turn-outcome').textContent()) ?? '', /^Turn \d+ \(message 1\) ended: interrupted/));
    assert.equal(await page.locator('#message-status').textContent(), 'Interrupted: the turn ended and its list stays.');
    await eventually(async () => assert.equal(await page.locator('#agent-activity').textContent(), 'idle'));
    assert.equal(await page.locator('#interrupt').isVisible(), false);
    assert.equal((await parts.client.session(id)).turnOpen, false, 'the session itself says the turn ended');
    await waitForList(page, list);
    assertCleanPage(seen);
  });

  test('a message sent while a turn runs is shown as queued, then gets its own turn and answer', { timeout: 90_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const { page, seen } = await openLiveSession(parts, 'queue-page');
    // The slow story's first answer takes 8 s: long enough to queue a second message behind it.
    await sendMessage(page, MESSAGES.slow);
    await eventually(async () => assert.match((await page.locator('#agent-activity').textContent()) ?? '', /^calling the model/));
    await sendMessage(page, MESSAGES.queued);
    await eventually(async () => assert.equal(await page.locator('#message-status').textContent(), 'Message 2 queued behind 1 other: its turn starts when the running one ends.'));
    await eventually(async () => assert.match((await page.locator('#agent-activity').textContent()) ?? '', / · 1 message queued$/));

    await eventually(async () => assert.deepEqual(await page.locator('#conversation .msg-answer .msg-text').allTextContents(), [ANSWERS.slow, ANSWERS.queued]), 30_000);
    assert.deepEqual(await page.locator('#conversation .msg-user .msg-text').allTextContents(), [MESSAGES.slow, MESSAGES.queued]);
    await eventually(async () => assert.match((await page.locator('#turn-outcome').textContent()) ?? '', /^Turn \d+ \(message 2\) completed$/));
    await eventually(async () => assert.equal(await page.locator('#agent-activity').textContent(), 'idle'));
    assertCleanPage(seen);
  });

  test('behind a token, a waiting call is denied from the page with a reason, which the model gets as the result', { timeout: 90_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const id = uniqueId('deny-page');
    await parts.client.start(id);
    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.tokenServer.url, id));
    await page.locator('#token-form').waitFor({ state: 'visible', timeout: WAIT_MS });
    await page.locator('#token-input').fill(token);
    await page.locator('#token-form button[type="submit"]').click();
    await eventually(async () => assert.equal(await page.locator('#connection').textContent(), 'Live'));

    // The page's POSTs carry the bearer token, and pass the Origin check as the service's own page.
    await sendMessage(page, MESSAGES.deny);
    const waiting = page.locator('#approvals li.approval');
    await waiting.waitFor({ state: 'visible', timeout: WAIT_MS });
    const reason = 'Not the README <b>today</b>';
    await waiting.locator('input.approval-reason').fill(reason);
    await waiting.locator('button.deny').click();
    await page.locator('#approvals').waitFor({ state: 'hidden', timeout: WAIT_MS });
    await eventually(async () =>
      assert.equal(await page.locator('#conversation li.tool-call[data-tool="read_file"] .tool-result pre').textContent(), `the call was denied by a person: ${reason}`),
    );
    await eventually(async () => assert.equal(await page.locator('#conversation .msg-answer .msg-text').textContent(), ANSWERS.deny));
    assert.equal(await page.locator('#conversation b').count(), 0, 'the reason stayed text');
    assertCleanPage(seen);
  });

  test("markup in the user's message, the model's answer and its todo_write is shown as text and runs nothing", { timeout: 90_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const { page, seen } = await openLiveSession(parts, 'xss-agent');
    await sendMessage(page, HOSTILE.message);

    await eventually(async () => assert.match((await page.locator('#turn-outcome').textContent()) ?? '', /^Turn \d+ \(message 1\) completed$/));
    // The first answer carries text beside its call, the second ends the turn, the third answers the reminder.
    assert.deepEqual(await page.locator('#conversation .msg-assistant > .msg-text').allTextContents(), [HOSTILE.answer, HOSTILE.answer, HOSTILE.answer]);
    assert.deepEqual(await page.locator('#conversation .msg-user .msg-text').allTextContents(), [HOSTILE.message]);
    assert.deepEqual(await page.locator('#conversation .tool-todo-content').allTextContents(), [HOSTILE.todoContent]);
    // The loop's reminder quotes the open item: it is marked as the loop's, not the person's, and is text too.
    assert.match((await page.locator('#conversation .msg-nudge .msg-text').textContent()) ?? '', /^1 todo is still open: "<script>window.__pwned=2<\/script>" \(in_progress\)/);
    await waitForList(page, [todo(HOSTILE.todoContent, 'in_progress')]);
    assert.equal(await page.locator('#main img, #main script, #main iframe, #main b').count(), 0, 'no element was made from the text');
    await page.locator('#conversation .msg-answer .msg-text').last().hover();
    assert.equal(await page.evaluate('window.__pwned'), undefined);
    assert.deepEqual(seen.dialogs, []);
    assertCleanPage(seen);
  });

  test("a subagent shows what it is working on, and its whole list only once expanded, fetched then and again when it changes", { timeout: 90_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const { client: sessions } = parts;
    const root = uniqueId('fan-out');
    await sessions.start(root);
    const { sessionId: worker } = await sessions.spawnSubagent(root, { name: 'worker', task: 'Port the parser' });
    await sessions.todoWrite(worker, { todos: [todo('Read the grammar', 'completed'), todo('Port the lexer', 'in_progress'), todo('Port the parser')] });
    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.server.url, root));
    const fetched: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes(`/sessions/${encodeURIComponent(worker)}/todos`)) fetched.push(request.url());
    });
    const row = page.locator(`#children li[data-id="${worker}"]`);
    // The summary is the tree's: visibility's, which trails the write by a little.
    await eventually(async () => assert.equal(await row.locator('.child-working').textContent(), 'In progress: Port the lexer'));
    assert.match((await row.textContent()) ?? '', /1\/3 done · 1 in progress/);
    assert.equal(await row.locator('.child-todos').count(), 0);
    assert.deepEqual(fetched, [], 'no list is fetched before it is asked for');

    await row.locator('.child-expand').click();
    const items = () => row.locator('.child-todos > li').evaluateAll((lis) => lis.map((li) => ({ content: li.querySelector('.content')?.textContent ?? '', status: li.getAttribute('data-status') })));
    await eventually(async () => assert.deepEqual(await items(), [todo('Read the grammar', 'completed'), todo('Port the lexer', 'in_progress'), todo('Port the parser')]));
    assert.equal(await row.locator('.child-expand').getAttribute('aria-expanded'), 'true');
    assert.equal(fetched.length, 1);

    // A change the tree shows (a new version) fetches the expanded list again.
    await sessions.todoWrite(worker, { todos: [todo('Read the grammar', 'completed'), todo('Port the lexer', 'completed'), todo('Port the parser', 'in_progress')] });
    await eventually(async () => assert.deepEqual(await items(), [todo('Read the grammar', 'completed'), todo('Port the lexer', 'completed'), todo('Port the parser', 'in_progress')]), 2 * WAIT_MS);
    await row.locator('.child-expand').click();
    assert.equal(await row.locator('.child-todos').count(), 0);
    await eventually(async () => assert.equal(await row.locator('.child-working').textContent(), 'In progress: Port the parser'));
    assertCleanPage(seen);
  });

  test('the conversation shows the answer growing as the model writes it, and the recorded message in its place once the step ends', { timeout: 90_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const { page, seen } = await openLiveSession(parts, 'words');
    // Every text the growing answer shows, as the page draws it (sampling from here could miss the steps).
    await page.evaluate(`(() => {
      const views = (window.__views = []);
      const conversation = document.getElementById('conversation');
      new MutationObserver(() => {
        const text = conversation.querySelector('li.msg-live .msg-text')?.textContent;
        if (typeof text === 'string' && text !== views.at(-1)) views.push(text);
      }).observe(conversation, { childList: true, subtree: true, characterData: true });
    })()`);
    await sendMessage(page, STORY.message);
    await eventually(async () => assert.equal(await page.locator('#conversation .msg-answer .msg-text').textContent(), STORY.answer), 60_000);
    const shown = (await page.evaluate('window.__views')) as string[];
    assert.ok(shown.length >= 3, `the answer was seen growing: ${JSON.stringify(shown)}`);
    for (const [k, text] of shown.entries()) {
      assert.ok(STORY.answer.startsWith(text), `every view is the start of the answer: ${JSON.stringify(text)}`);
      if (k > 0) assert.ok(text.length > shown[k - 1]!.length, 'and longer than the view before');
    }
    assert.ok(shown[0]!.length < STORY.answer.length, 'it was seen before it was whole');
    assert.equal(await page.locator('#conversation li.msg-live').count(), 0, 'the growing answer gave way to the recorded one');
    assertCleanPage(seen);
  });

  test('a session with a parent, two subagents, a mixed list and its conversation is captured as a screenshot', { timeout: 90_000 }, async (t) => {
    const parts = ready(t);
    if (parts === undefined) return;
    const { client: sessions } = parts;
    const root = uniqueId('release');
    await sessions.start(root, { task: 'Release 2.4 of the billing service' });
    await sessions.turnStart(root);
    await sessions.todoWrite(root, {
      todos: [todo('Freeze the release branch', 'completed'), todo('Backend changes (subagent)', 'in_progress'), todo('Publish release notes')],
    });
    const { sessionId: backend } = await sessions.spawnSubagent(root, { name: 'backend', task: MESSAGES.release });
    const { sessionId: migrations } = await sessions.spawnSubagent(backend, { name: 'migrations', task: 'Add the invoice_exports table' });
    const { sessionId: tests } = await sessions.spawnSubagent(backend, { name: 'tests', task: 'Cover the export endpoint end to end' });
    await sessions.todoWrite(migrations, { todos: [todo('Write the migration', 'completed'), todo('Run it on staging', 'completed')] });
    await sessions.close(migrations);
    await sessions.todoWrite(tests, {
      todos: [todo('Fixture invoices', 'completed'), todo('Happy path', 'completed'), todo('Pagination', 'in_progress'), todo('Permission errors')],
    });
    // The backend's agent plans its work (its first list is refused), makes progress, and waits
    // for a person to approve a read: the picture shows the conversation and the waiting call.
    await sessions.sendMessage(backend, MESSAGES.release);
    const mixed = [...RELEASE_LIST];
    // Signalled once the turn rests at the approval: a signal sent while its updates land can find the workflow busy.
    // Reaching it takes the turn four model calls and three writes, each an activity: on a loaded
    // 2-core machine (CI runs the suites side by side) that took more than WAIT_MS.
    await eventually(async () => assert.equal((await sessions.session(backend)).agent.pendingApprovals.length, 1), 3 * WAIT_MS);
    // A sender's mistake, so the picture shows the ignored-signals card too.
    await signal(backend, 'todo_write', { todos: [todo('Update the API reference', 'completed')] });
    await ignoredSignalsOf(parts.server.url, backend, 1);

    const { page, seen } = await openPage(parts.browser, sessionUrl(parts.server.url, backend));
    await waitForList(page, mixed);
    await eventually(async () => assert.equal(await page.locator('#children > li').count(), 2));
    await eventually(async () => assert.match((await page.locator(`#children li[data-id="${tests}"]`).textContent()) ?? '', /2\/4 done · 1 in progress/));
    await eventually(async () => assert.match((await page.locator(`#children li[data-id="${migrations}"]`).textContent()) ?? '', /Closed/));
    await eventually(async () => assert.equal(await page.locator('#history-slider').isDisabled(), false));
    await page.locator('#ignored-signals').waitFor({ state: 'visible', timeout: WAIT_MS });
    await page.locator('#approvals li.approval').waitFor({ timeout: WAIT_MS });
    await eventually(async () => assert.equal(await page.locator('#conversation li.tool-call.rejected').count(), 1));
    await eventually(async () => assert.equal(await page.locator('#conversation li.tool-call').count(), 4));
    assert.equal(await page.locator('#parent a').textContent(), root);
    assert.match((await page.locator('#turn').textContent()) ?? '', /^1 · open$/);

    mkdirSync(OUTPUT_DIR, { recursive: true });
    const file = join(OUTPUT_DIR, 'dashboard.png');
    // The whole page, so the picture shows the conversation below the list.
    await page.screenshot({ path: file, animations: 'disabled', fullPage: true });
    // The README's picture is refreshed only on request, so a test run leaves the checkout clean.
    if (process.env.UPDATE_SCREENSHOT === '1') {
      mkdirSync(join(ROOT, 'docs'), { recursive: true });
      copyFileSync(file, join(ROOT, 'docs', 'dashboard.png'));
    }
    assert.deepEqual(seen.errors, []);
  });
});
