import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { findFreePort, TEMPORAL_CLI_VERSION, TEMPORAL_SERVER_VERSION, temporalCliVersion } from '../../src/devserver';
import { metricSeries, parseMetrics, ROOT, runCli, spawnCli, uniqueId, until } from '../helpers';

// `npm start` is `agent-sessions up`: the first thing a newcomer runs. With no model configured it
// must start a worker, the HTTP service and the scripted demo model, say so, print commands that
// work as printed, and stop cleanly on Ctrl-C. Here it is pointed at the test server
// (TEMPORAL_ADDRESS set: no local server of its own) on a task queue of its own.

const taskQueue = uniqueId('up-demo');
// No model configured, whatever the machine running the tests has set.
const env = { AGENT_SESSIONS_TASK_QUEUE: taskQueue, OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined };
let up: Awaited<ReturnType<typeof spawnCli>> | undefined;

after(async () => {
  if (up !== undefined && up.child.exitCode === null) {
    up.child.kill('SIGKILL');
    await up.exited;
  }
});

test('npm start (agent-sessions up) runs the scripted demo end to end: the chat it suggests gets its answer, the HTTP API shows the list, Ctrl-C stops it', { timeout: 120_000 }, async () => {
  const httpPort = await findFreePort();
  up = await spawnCli(['up', '--allow-parallel-in-progress', 'true', '--http-port', String(httpPort)], env);
  const started = up;
  await until('"agent-sessions is running."', () => (started.output().includes('agent-sessions is running.') ? true : undefined), 60_000).catch((error: Error) => {
    throw new Error(`${error.message}; up printed:\n${started.output()}`);
  });
  const output = started.output();
  assert.match(output, /Model: SCRIPTED DEMO, not a real model/, 'it says plainly that the answers are scripted');
  assert.match(output, new RegExp(`Worker: task queue "${taskQueue}", allowParallelInProgress=true`));
  const base = /Dashboard and HTTP API: (http:\/\/\S+)/.exec(output)?.[1];
  assert.equal(base, `http://127.0.0.1:${httpPort}`);
  // The message it tells the newcomer to send, taken from what it printed.
  const message = /chat demo "([^"]+)"/.exec(output)?.[1];
  assert.ok(message !== undefined, `a chat command to try in:\n${output}`);

  const id = uniqueId('up-demo-chat');
  const chat = await runCli(['chat', id, message], { env });
  assert.equal(chat.code, 0, chat.stderr);
  assert.ok(chat.stdout.trim().length > 0, 'the answer is printed');
  assert.match(chat.stderr, /← Updated todo list: 0 pending, 0 in progress, 3 completed/, chat.stderr);

  // The same session through the HTTP service `up` started: the list the demo agent finished.
  const todos = (await (await fetch(`${base}/sessions/${encodeURIComponent(id)}/todos`)).json()) as Array<{ status: string }>;
  assert.equal(todos.length, 3);
  assert.ok(todos.every((todo) => todo.status === 'completed'), JSON.stringify(todos));
  const usage = await runCli(['usage', id, '--json'], { env });
  assert.equal(usage.code, 0, usage.stderr);
  assert.equal(JSON.parse(usage.stdout).session.model_calls, 5);

  // Metrics are on: the worker's on a free port, the HTTP service's at /metrics, both printed.
  const metrics = new RegExp(`Metrics \\(Prometheus\\): worker (http://127\\.0\\.0\\.1:\\d+/metrics), HTTP service ${base}/metrics`).exec(output)?.[1];
  assert.ok(metrics !== undefined, `the metrics endpoints in:\n${output}`);
  const worker = parseMetrics(await (await fetch(metrics)).text());
  assert.deepEqual(metricSeries(worker, 'agent_sessions_turns_total'), [{ labels: { outcome: 'completed' }, value: 1 }]);
  assert.equal(metricSeries(worker, 'agent_sessions_model_calls_total').reduce((sum, s) => sum + s.value, 0), 5);
  assert.ok(worker.some((sample) => sample.name.startsWith('temporal_')), "Temporal's own metrics are there too");
  const served = parseMetrics(await (await fetch(`${base}/metrics`)).text());
  assert.deepEqual(
    metricSeries(served, 'agent_sessions_http_request_duration_seconds_count').filter((sample) => sample.labels['route'] === '/sessions/{id}/todos'),
    [{ labels: { method: 'GET', route: '/sessions/{id}/todos', status: '200' }, value: 1 }],
  );

  started.child.kill('SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([started.exited, new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still running 30 s after SIGINT'), 30_000)))]);
  clearTimeout(timer);
  assert.equal(code, 0, started.output());
  // Ctrl-C prints one line per component that stopped, and nothing else.
  const afterStop = started.output().split('Ctrl-C stops everything.\n')[1]!;
  assert.deepEqual(afterStop.split('\n').filter((line) => line !== ''), [
    `stopped the worker (task queue "${taskQueue}")`,
    `stopped the HTTP API and dashboard (${base})`,
    'stopped the scripted demo model',
  ]);
  const stopped = await fetch(`${base}/healthz`).then(
    () => 'answering',
    () => 'closed',
  );
  assert.equal(stopped, 'closed', 'the HTTP service stopped with it');
});

test('Ctrl-C on npm start with its own Temporal server prints one line per component that stopped, and no line of the server\'s', { timeout: 180_000 }, async () => {
  const [port, uiPort, httpPort] = [await findFreePort(), await findFreePort(), await findFreePort()];
  const dir = mkdtempSync(join(tmpdir(), 'up-own-server-'));
  const db = join(dir, 'temporal.sqlite');
  // Its own process group, as a terminal runs it: Ctrl-C signals the server and the UI too.
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin', 'agent-sessions.js'), 'up', '--allow-parallel-in-progress', 'true', '--port', String(port), '--ui-port', String(uiPort), '--db', db, '--http-port', String(httpPort)],
    { env: { ...process.env, ...env, TEMPORAL_ADDRESS: undefined }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await until('"agent-sessions is running."', () => (stdout.includes('agent-sessions is running.') ? true : undefined), 150_000).catch((error: Error) => {
      throw new Error(`${error.message}; up printed:\n${stdout}${stderr}`);
    });
    assert.ok(stdout.includes(`log in ${db}.log`), `it prints where the server logs:\n${stdout}`);
    // The admin tool the docs use is the binary that runs this server, named by its path.
    const cli = /^ {2}Temporal CLI: (\S+) {2}\(try: \S+ workflow show -w demo/m.exec(stdout)?.[1];
    assert.ok(cli !== undefined, `it names the temporal CLI:\n${stdout}`);
    assert.deepEqual(await temporalCliVersion(cli), { cli: TEMPORAL_CLI_VERSION, server: TEMPORAL_SERVER_VERSION });
    const before = stderr;
    process.kill(-child.pid!, 'SIGINT');
    assert.equal(await exited, 0, stdout + stderr);
    assert.deepEqual(stderr.slice(before.length).split('\n').filter((line) => line !== ''), [
      `stopped the worker (task queue "${taskQueue}")`,
      `stopped the HTTP API and dashboard (http://127.0.0.1:${httpPort})`,
      'stopped the scripted demo model',
      `stopped the Temporal dev server and its Web UI (its log: ${db}.log)`,
    ]);
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
