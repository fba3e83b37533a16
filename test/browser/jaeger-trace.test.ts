import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { findJaegerBinary, startJaeger, type RunningJaeger } from '../../src/devserver';
import { startTracing, type Tracing } from '../../src/tracing';
import { TRACED_CHAT, tracedChatScript } from '../fixtures/traced-chat';
import { ROOT, startTestBed, until, uniqueId } from '../helpers';
import { IN_MEMORY_TRACING } from '../tracing-helpers';
import { CHROMIUM, LAUNCH_ARGS, VIEWPORT, ensureChromium } from './chromium';

// A turn's trace in Jaeger's own UI, as docs/observability.md shows it (UPDATE_SCREENSHOT=1 npm
// test refreshes docs/jaeger-trace.png). Jaeger built from the Go module proxy serves only its
// placeholder page (the UI's assets come from the jaeger-ui repository, which no registry
// serves): then there is no UI to show and the test says so.

const OUTPUT_DIR = process.env.TEST_OUTPUT_DIR ?? join(ROOT, 'test-output');
let jaeger: RunningJaeger | undefined;
let skipReason: string | undefined;
let browser: Browser | undefined;
let tracing: Tracing | undefined;

before(async () => {
  jaeger = await startJaeger({ binary: await findJaegerBinary(), dir: mkdtempSync(join(tmpdir(), 'jaeger-ui-test-')), keepsProcessAlive: false });
  if (!jaeger.uiAssets) {
    skipReason = `Jaeger at ${jaeger.uiUrl} serves its placeholder page: a build from the Go module proxy carries no UI assets`;
    return;
  }
  skipReason = await ensureChromium();
  if (skipReason !== undefined) return;
  tracing = await startTracing({ ...IN_MEMORY_TRACING, endpoint: `${jaeger.otlpHttpUrl}/v1/traces` }, { serviceName: 'agent-sessions' });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS });
});

after(async () => {
  await browser?.close();
  await tracing?.shutdown();
  await jaeger?.stop();
});

test("a turn's trace opens in Jaeger's UI, every span of the turn in one tree", { timeout: 120_000 }, async (t) => {
  if (skipReason !== undefined) return void t.skip(skipReason);
  assert.ok(jaeger && browser && tracing);
  const bed = await startTestBed('jaeger-ui', { allowParallelInProgress: true }, {
    model: { script: tracedChatScript() },
    worker: { tracing: tracing.worker },
    client: { plugins: [tracing.clientPlugin] },
  });
  try {
    const sessionId = uniqueId('release');
    const turn = await tracing.inSpan('agent-sessions chat', {}, async () => {
      const sent = await bed.client.sendMessage(sessionId, TRACED_CHAT.first);
      return until('the turn', async () => (await bed.client.session(sessionId)).agent.recentTurns.find((ended) => ended.messageId === sent.messageId), 60_000);
    });
    await tracing.flush();
    const page = await (await browser.newContext({ viewport: { ...VIEWPORT, height: 1000 } })).newPage();
    await until('the trace in Jaeger', async () => ((await (await fetch(`${jaeger!.uiUrl}/api/traces/${turn.traceId}`)).ok) ? true : undefined), 30_000, { ignoreErrors: true });
    await page.goto(`${jaeger.uiUrl}/trace/${turn.traceId}`);
    await page.getByText(`invoke_agent ${sessionId}`).first().waitFor({ timeout: 30_000 });
    mkdirSync(OUTPUT_DIR, { recursive: true });
    const file = join(OUTPUT_DIR, 'jaeger-trace.png');
    await page.screenshot({ path: file });
    if (process.env.UPDATE_SCREENSHOT === '1') copyFileSync(file, join(ROOT, 'docs', 'jaeger-trace.png'));
  } finally {
    await bed.close();
  }
});
