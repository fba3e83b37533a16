import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { SessionClient } from '../../src/client';
import { startModelServer, type ModelServer, type ScriptJson } from '../../src/model-server';
import type { SessionSnapshot } from '../../src/session';
import { connectClient, replaySession, ROOT, temporalAddress, uniqueId } from '../helpers';
import { killStrays, startWorkerProcess, type WorkerProcess } from './fault-helpers';
import { startEverythingServer } from '../mcp-servers';

const taskQueue = uniqueId('tool-kill');
const TASK = 'Run the long tools';
const scratch = mkdtempSync(join(tmpdir(), 'tool-kill-'));
const toolsLog = join(scratch, 'tools.log');

// A turn of two long tool calls, an MCP server's and a module's: the worker is killed during each.
const script: ScriptJson = {
  description: 'Two long tool calls, each interrupted by the death of its worker.',
  conversations: [
    {
      name: 'long-tools',
      match: { firstUserMessage: TASK },
      steps: [
        { respond: { tool_calls: [{ name: 'mcp__everything__trigger-long-running-operation', arguments: { duration: 8, steps: 8 } }] } },
        { expect: { lastMessage: { role: 'tool', contentMatches: 'Long running operation completed' } }, respond: { tool_calls: [{ name: 'slow_count', arguments: { n: 8 } }] } },
        { expect: { lastMessage: { role: 'tool', contentMatches: '^counted to 8$' } }, respond: { content: 'Both ran to their end.' } },
      ],
    },
  ],
};

let model: ModelServer;
let client: SessionClient;
let everything: Awaited<ReturnType<typeof startEverythingServer>>;
let config: string;
const workers: WorkerProcess[] = [];

/** A worker process with the MCP server and the tools module (fault-helpers' own start, with this test's environment). */
async function startWorker(): Promise<WorkerProcess> {
  const worker = await startWorkerProcess(await temporalAddress(), taskQueue, 60_000, {
    OPENAI_BASE_URL: model.url,
    AGENT_SESSIONS_MODEL: 'scripted',
    AGENT_SESSIONS_MCP_CONFIG: config,
    AGENT_SESSIONS_TOOLS: join(ROOT, 'test', 'fixtures', 'tools-module.mjs'),
    AGENT_SESSIONS_APPROVE_TOOLS: 'none',
    TOOLS_LOG: toolsLog,
  });
  workers.push(worker);
  return worker;
}

before(async () => {
  everything = await startEverythingServer();
  config = join(scratch, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { everything: { url: everything.url } } }));
  model = await startModelServer({ script });
  client = await connectClient(taskQueue);
});

after(async () => {
  await killStrays();
  await client.closeConnection();
  await model.close();
  everything.stop();
});

// Not the helpers' waitForSession: while its worker is dead the session cannot answer, and that
// is a moment to wait through here, not a failure.
async function waitFor(id: string, what: string, done: (s: SessionSnapshot) => boolean, timeoutMs = 120_000): Promise<SessionSnapshot> {
  const deadline = Date.now() + timeoutMs;
  let last: SessionSnapshot | undefined;
  while (Date.now() < deadline) {
    last = await client.session(id).catch(() => undefined);
    if (last !== undefined && done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const outputs = workers.map((w, k) => `--- worker ${k + 1}:\n${w.output()}`).join('\n');
  throw new Error(`${what} did not happen within ${timeoutMs} ms; last seen: ${JSON.stringify(last?.agent)}\n${outputs}`);
}

const running = (tool: string) => (s: SessionSnapshot) => s.agent.activity.state === 'running-tools' && s.agent.activity.tools.includes(tool);

test('a worker killed during a long MCP call and again during a long module tool: each call is made again on a new worker and the turn completes', async () => {
  const id = uniqueId('tool-kill');
  const first = await startWorker();
  const { messageId } = await client.sendMessage(id, TASK);
  await waitFor(id, 'the MCP call', running('mcp__everything__trigger-long-running-operation'));
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await first.kill();

  const second = await startWorker();
  await waitFor(id, 'the module tool', running('slow_count'));
  // Killed once the module tool has started on this worker.
  for (let i = 0; i < 300 && !readFileSync(toolsLog, 'utf8').includes('started'); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await second.kill();

  await startWorker();
  const done = await waitFor(id, 'the end of the turn', (s) => s.agent.lastTurn?.messageId === messageId && !s.turnOpen, 180_000);
  assert.equal(done.agent.lastTurn?.reason, 'completed', done.agent.lastTurn?.detail ?? '');
  const results = (await client.transcript(id)).messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
  assert.match(results[0]!, /Long running operation completed/);
  assert.equal(results[1], 'counted to 8');
  const log = readFileSync(toolsLog, 'utf8').trim().split('\n');
  assert.equal(log.filter((line) => line.endsWith('started')).length, 2, `the module tool was started again after the kill: ${log.join(' | ')}`);
  assert.equal(log.filter((line) => line.endsWith('finished')).length, 1);
  // The turn replays under both policies from its recorded history alone.
  await replaySession(client, id, { allowParallelInProgress: true });
  await replaySession(client, id, { allowParallelInProgress: false });
});
