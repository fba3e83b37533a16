import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { findPhoenix, startPhoenix, type RunningPhoenix } from '../../src/devserver';
import { startTracing, type Tracing } from '../../src/tracing';
import { TRACED_CHAT, tracedChatScript } from '../fixtures/traced-chat';
import { ROOT, startTestBed, until, uniqueId } from '../helpers';
import { IN_MEMORY_TRACING } from '../tracing-helpers';
import { CHROMIUM, LAUNCH_ARGS, ensureChromium } from './chromium';

// A turn's trace in the trace UI of `up --traces` (Arize Phoenix), reached as a person reaches it:
// the dashboard's link on the turn. docs/observability.md shows the screenshot this takes
// (UPDATE_SCREENSHOT=1 refreshes docs/traces.png).

const OUTPUT_DIR = process.env.TEST_OUTPUT_DIR ?? join(ROOT, 'test-output');
const MODEL = 'scripted-traced';
let phoenix: RunningPhoenix | undefined;
let skipReason: string | undefined;
let browser: Browser | undefined;
let tracing: Tracing | undefined;

before(async () => {
  skipReason = await ensureChromium();
  if (skipReason !== undefined) return;
  phoenix = await startPhoenix({ python: await findPhoenix(), dir: mkdtempSync(join(tmpdir(), 'phoenix-ui-test-')), keepsProcessAlive: false });
  tracing = await startTracing({ ...IN_MEMORY_TRACING, endpoint: `${phoenix.otlpHttpUrl}/v1/traces` }, { serviceName: 'agent-sessions' });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS });
});

after(async () => {
  await browser?.close();
  await tracing?.shutdown();
  await phoenix?.stop();
});

test("the dashboard's link on a turn opens its trace in Phoenix: the model calls with their tokens, the tools, the refused write and the subagent in one tree", { timeout: 180_000 }, async (t) => {
  if (skipReason !== undefined) return void t.skip(skipReason);
  assert.ok(phoenix && browser && tracing);
  const policy = { allowParallelInProgress: true };
  const bed = await startTestBed('phoenix-ui', policy, {
    model: { script: tracedChatScript(MODEL) },
    worker: { tracing: tracing.worker },
    client: { plugins: [tracing.clientPlugin] },
    http: { policy, tracing, traceUrl: phoenix.traceUrl },
  });
  try {
    const sessionId = uniqueId('release');
    const turn = await tracing.inSpan('agent-sessions chat', {}, async () => {
      const sent = await bed.client.sendMessage(sessionId, TRACED_CHAT.first);
      return until('the turn', async () => (await bed.client.session(sessionId)).agent.recentTurns.find((ended) => ended.messageId === sent.messageId), 60_000);
    });
    assert.match(turn.traceId ?? '', /^[0-9a-f]{32}$/);
    await tracing.flush();

    // Wide: Phoenix indents its trace tree and shows each span's time and tokens only when the tree has room.
    const context = await browser.newContext({ viewport: { width: 1920, height: 1300 } });
    try {
      const dashboard = await context.newPage();
      await dashboard.goto(`${bed.http.url}/#/sessions/${encodeURIComponent(sessionId)}`);
      const link = dashboard.locator('#turn-outcome a.turn-trace');
      await link.waitFor({ state: 'visible', timeout: 30_000 });
      assert.equal(await link.getAttribute('href'), phoenix.traceUrl.replace('{traceId}', turn.traceId!));
      const [page] = await Promise.all([context.waitForEvent('page'), link.click()]);
      // Phoenix finds the trace's project and opens the trace there.
      await page.waitForURL(/\/projects\/[^/]+\/.*traces?\//, { timeout: 60_000 });
      await page.getByText(`invoke_agent ${sessionId}/${TRACED_CHAT.subagent}`).first().waitFor({ timeout: 60_000 });
      for (const name of [`invoke_agent ${sessionId}`, 'execute_tool todo_write', 'execute_tool spawn_subagent']) {
        assert.ok((await page.getByText(name, { exact: true }).count()) > 0, `${name} is shown`);
      }
      // The model calls: six in the turn (a failed attempt and five answers), the subagent's among them.
      const chats = page.getByText(/^chat /);
      assert.ok((await chats.count()) >= 6, `${await chats.count()} model calls shown`);
      // The first answer's call opened, as the screenshot shows it: its tokens beside the tree.
      await chats.nth(1).click();
      // The span's panel names its kind as Phoenix read it from gen_ai.operation.name=chat.
      await page.getByText('llm', { exact: true }).first().waitFor({ timeout: 30_000 });
      mkdirSync(OUTPUT_DIR, { recursive: true });
      const file = join(OUTPUT_DIR, 'traces.png');
      await page.screenshot({ path: file });
      if (process.env.UPDATE_SCREENSHOT === '1') copyFileSync(file, join(ROOT, 'docs', 'traces.png'));
    } finally {
      await context.close();
    }
  } finally {
    await bed.close();
  }
});
