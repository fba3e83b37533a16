import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as Client2026, StreamableHTTPClientTransport as StreamableHTTPClientTransport2026 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransport2026 } from '@modelcontextprotocol/client/stdio';
import { startHttpServer, type HttpServer } from '../../src/http/server';
import { todosResourceUri } from '../../src/mcp/session-tools';
import { countAcceptedUpdates, ROOT, runCli, temporalAddress, todo, uniqueId, until, useTestBed } from '../helpers';

const POLICY = { allowParallelInProgress: false };
const TOKEN = 'mcp-test-token';
/** The worker and the HTTP service (with a token) both run the single-in-progress policy. */
const bed = useTestBed('mcp', POLICY, { http: { policy: POLICY, token: TOKEN } });

/** The environment `agent-sessions mcp` runs in: the test server and the bed's task queue. */
async function cliEnv(): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return { ...env, TEMPORAL_ADDRESS: await temporalAddress(), AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue };
}

/**
 * A 2025-11-25 client (the protocol the agent CLIs speak today) on `agent-sessions mcp` over
 * stdio: serving `sessionId`, or with no `--session` when it is undefined (in `cwd`).
 */
async function stdioClient(sessionId: string | undefined, policy = 'false', cwd?: string): Promise<{ client: Client2025; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, 'bin', 'agent-sessions.js'), 'mcp', ...(sessionId !== undefined ? ['--session', sessionId] : []), '--allow-parallel-in-progress', policy],
    env: await cliEnv(),
    ...(cwd !== undefined ? { cwd } : {}),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client2025({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

/** A 2025-11-25 client over Streamable HTTP, with the service's token. */
async function httpClient(sessionId: string, base = bed.http.url, token: string | undefined = TOKEN): Promise<Client2025> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/sessions/${encodeURIComponent(sessionId)}/mcp`), {
    ...(token !== undefined ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
  });
  const client = new Client2025({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

function text(result: unknown): string {
  const content = (result as CallToolResult).content;
  assert.equal(content.length, 1);
  assert.equal(content[0]!.type, 'text');
  return (content[0] as { text: string }).text;
}

async function acceptedWrites(sessionId: string): Promise<number> {
  return countAcceptedUpdates(await bed.client.exportHistory(sessionId));
}

/** What `agent-sessions tool-definition` prints for a policy: the one source of the tool. */
async function printedDefinition(policy: 'true' | 'false'): Promise<{ name: string; description: string; parameters: unknown }> {
  const printed = await runCli(['tool-definition', '--allow-parallel-in-progress', policy]);
  assert.equal(printed.code, 0, printed.stderr);
  return (JSON.parse(printed.stdout) as { function: { name: string; description: string; parameters: unknown } }).function;
}

describe('over stdio (agent-sessions mcp)', () => {
  test('tools/list offers todo_write exactly as tool-definition prints it for the policy, and todo_read', async () => {
    for (const policy of ['true', 'false'] as const) {
      const { client } = await stdioClient(uniqueId('mcp-list'), policy);
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(
          tools.map((tool) => tool.name),
          ['todo_write', 'todo_read'],
        );
        const definition = await printedDefinition(policy);
        assert.equal(tools[0]!.description, definition.description);
        assert.deepEqual(tools[0]!.inputSchema, definition.parameters);
        assert.match(client.getInstructions() ?? '', /ENTIRE list/);
        assert.match(client.getInstructions() ?? '', /todo_read/);
      } finally {
        await client.close();
      }
    }
  });

  test('an accepted write answers the render line and is the session’s list; a refused one is an isError result naming the rule, and nothing reaches history', async () => {
    const id = uniqueId('mcp-write');
    const { client } = await stdioClient(id);
    try {
      const accepted = await client.callTool({ name: 'todo_write', arguments: { todos: [todo('Run lint', 'in_progress'), todo('Fix the errors')] } });
      assert.equal(accepted.isError, undefined);
      assert.equal(text(accepted), 'Updated todo list: 1 pending, 1 in progress, 0 completed');
      assert.deepEqual(await bed.client.todos(id), [todo('Run lint', 'in_progress'), todo('Fix the errors')]);

      const refused = await client.callTool({ name: 'todo_write', arguments: { todos: [todo('Run lint', 'in_progress'), todo('Fix the errors', 'in_progress')] } });
      assert.equal(refused.isError, true);
      assert.match(text(refused), /in_progress/);
      assert.match(text(refused), /\[parallel-in-progress\]/);
      assert.equal(await acceptedWrites(id), 1);

      const printed = await runCli(['todos', id], { env: { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue } });
      assert.match(printed.stdout, /Run lint/);
    } finally {
      await client.close();
    }
  });

  test('todo_read and the resource give the list back, to a client that reconnected', async () => {
    const id = uniqueId('mcp-read');
    const first = await stdioClient(id);
    const empty = JSON.parse(text(await first.client.callTool({ name: 'todo_read', arguments: {} })));
    assert.deepEqual(empty, { sessionId: id, todos: null, counts: { pending: 0, in_progress: 0, completed: 0 }, version: 0, turn: 0, closed: false });
    await first.client.callTool({ name: 'todo_write', arguments: { todos: [todo('Plan', 'completed'), todo('Build', 'in_progress')] } });
    await first.client.close();

    const again = await stdioClient(id);
    try {
      const reading = JSON.parse(text(await again.client.callTool({ name: 'todo_read', arguments: {} })));
      assert.deepEqual(reading.todos, [todo('Plan', 'completed'), todo('Build', 'in_progress')]);
      assert.deepEqual(reading.counts, { pending: 0, in_progress: 1, completed: 1 });
      const { resources } = await again.client.listResources();
      assert.deepEqual(
        resources.map((resource) => resource.uri),
        [todosResourceUri(id)],
      );
      const read = await again.client.readResource({ uri: todosResourceUri(id) });
      assert.equal(read.contents[0]!.mimeType, 'application/json');
      assert.deepEqual(JSON.parse((read.contents[0] as { text: string }).text).todos, reading.todos);
      await assert.rejects(again.client.readResource({ uri: 'session://another/todos' }), /no resource/);
    } finally {
      await again.client.close();
    }
  });

  test('a subscriber to the list is notified of its own writes and of a write made by another client (the CLI)', async () => {
    const id = uniqueId('mcp-sub');
    const { client, stderr } = await stdioClient(id);
    try {
      const updates: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void updates.push(notification.params.uri));
      await client.subscribeResource({ uri: todosResourceUri(id) });
      await client.callTool({ name: 'todo_write', arguments: { todos: [todo('Mine', 'in_progress')] } });
      await until('the notification of the client’s own write', () => (updates.length >= 1 ? true : undefined), 10_000).catch((error: Error) => {
        throw new Error(`${error.message}; the server said: ${stderr()}`);
      });
      const cli = await runCli(['write', id, '--json', JSON.stringify({ todos: [todo('Theirs', 'completed')] })], { env: { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue } });
      assert.equal(cli.code, 0, cli.stderr);
      await until('the notification of the CLI’s write', () => (updates.length >= 2 ? true : undefined), 10_000);
      assert.ok(updates.every((uri) => uri === todosResourceUri(id)));
      const reading = JSON.parse(((await client.readResource({ uri: todosResourceUri(id) })).contents[0] as { text: string }).text);
      assert.deepEqual(reading.todos, [todo('Theirs', 'completed')]);
    } finally {
      await client.close();
    }
  });

  test('a 2026-07-28 client (per-request envelope) writes, reads and is notified through subscriptions/listen', async () => {
    const id = uniqueId('mcp-2026');
    const client = new Client2026({ name: 'mcp-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(
      new StdioClientTransport2026({
        command: process.execPath,
        args: [join(ROOT, 'bin', 'agent-sessions.js'), 'mcp', '--session', id, '--allow-parallel-in-progress', 'false'],
        env: await cliEnv(),
        stderr: 'ignore',
      }),
    );
    try {
      const updates: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', (notification) => void updates.push(notification.params.uri));
      const subscription = await client.listen({ resourceSubscriptions: [todosResourceUri(id)] });
      assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, [todosResourceUri(id)]);
      const written = await client.callTool({ name: 'todo_write', arguments: { todos: [todo('Envelope', 'in_progress')] } });
      assert.equal(text(written), 'Updated todo list: 0 pending, 1 in progress, 0 completed');
      await bed.client.todoWrite(id, { todos: [todo('Envelope', 'completed')] });
      await until('two notifications', () => (updates.length >= 2 ? true : undefined), 10_000);
      await subscription.close();
    } finally {
      await client.close();
    }
  });

  test('hostile arguments get an error naming the problem, nothing is applied, and the server keeps serving', async () => {
    const id = uniqueId('mcp-hostile');
    const { client } = await stdioClient(id);
    try {
      await client.callTool({ name: 'todo_write', arguments: { todos: [todo('Keep me')] } });
      const cases: Array<[what: string, args: Record<string, unknown>, pattern: RegExp]> = [
        ['an extra property', { todos: [{ content: 'A', status: 'pending', priority: 'high' }] }, /unknown property "priority"/],
        ['an extra top-level property', { todos: [todo('A')], merge: true }, /"merge"/],
        ['todos of the wrong type', { todos: 'all of them' }, /todos/],
        ['a status outside the enum', { todos: [{ content: 'A', status: 'done' }] }, /status/],
        ['no todos at all', {}, /todos/],
        ['a 2 MB list', { todos: Array.from({ length: 2_000 }, (_, i) => todo(`${i} ${'x'.repeat(1000)}`)) }, /\[(too-many-items|list-too-large|content-too-long)\]/],
      ];
      for (const [what, args, pattern] of cases) {
        const answer = await client.callTool({ name: 'todo_write', arguments: args });
        assert.equal(answer.isError, true, what);
        assert.match(text(answer), pattern, what);
      }
      const readWithArgs = await client.callTool({ name: 'todo_read', arguments: { session: 'other' } });
      assert.equal(readWithArgs.isError, true);
      assert.match(text(readWithArgs), /todo_read takes no arguments/);
      await assert.rejects(client.callTool({ name: 'todo_delete', arguments: {} }), /unknown tool "todo_delete".*todo_write and todo_read/);

      assert.equal((await client.listTools()).tools.length, 2, 'the server still serves');
      assert.equal(await acceptedWrites(id), 1);
      assert.deepEqual(await bed.client.todos(id), [todo('Keep me')]);
    } finally {
      await client.close();
    }
  });

  test('without --session it serves a session named after the working folder and says which on stderr', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'mcp-cwd-')), 'main');
    mkdirSync(folder);
    const { client, stderr } = await stdioClient(undefined, 'false', folder);
    try {
      await client.listTools();
      assert.match(stderr(), /serving session main-[0-9a-f]{6} \(from the working folder/);
    } finally {
      await client.close();
    }
  });

  test('without a policy it refuses to start, naming the setting', async () => {
    const env = await cliEnv();
    delete env.ALLOW_PARALLEL_IN_PROGRESS;
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile(process.execPath, [join(ROOT, 'bin', 'agent-sessions.js'), 'mcp', '--session', 'x'], { env }, (error, _stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number), stderr }),
      ),
    );
    assert.equal(result.code, 2);
    assert.match(result.stderr, /missing setting .*--allow-parallel-in-progress/);
  });
});

describe('over Streamable HTTP (/sessions/{id}/mcp)', () => {
  test('a 2025 client with the token lists, writes, is refused with the rule’s words, and reads back', async () => {
    const id = uniqueId('mcp-http');
    const client = await httpClient(id);
    try {
      const { tools } = await client.listTools();
      const definition = await printedDefinition('false');
      assert.deepEqual(tools[0]!.inputSchema, definition.parameters);
      assert.equal(tools[0]!.description, definition.description);
      assert.equal(text(await client.callTool({ name: 'todo_write', arguments: { todos: [todo('Over HTTP', 'in_progress')] } })), 'Updated todo list: 0 pending, 1 in progress, 0 completed');
      const refused = await client.callTool({ name: 'todo_write', arguments: { todos: [todo('Over HTTP', 'in_progress'), todo('over  http')] } });
      assert.equal(refused.isError, true);
      assert.match(text(refused), /\[near-duplicate-content\]/);
      assert.equal(await acceptedWrites(id), 1);
      const reading = JSON.parse(text(await client.callTool({ name: 'todo_read', arguments: {} })));
      assert.deepEqual(reading.todos, [todo('Over HTTP', 'in_progress')]);
    } finally {
      await client.close();
    }
  });

  test('a 2026-07-28 client is notified through subscriptions/listen of a write another client made', async () => {
    const id = uniqueId('mcp-http-2026');
    const client = new Client2026({ name: 'mcp-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(
      new StreamableHTTPClientTransport2026(new URL(`${bed.http.url}/sessions/${id}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
    );
    try {
      const updates: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', (notification) => void updates.push(notification.params.uri));
      const subscription = await client.listen({ resourceSubscriptions: [todosResourceUri(id)] });
      await bed.client.todoWrite(id, { todos: [todo('Written elsewhere')] });
      await until('the notification of another client’s write', () => (updates.length >= 1 ? true : undefined), 10_000);
      assert.equal(updates[0], todosResourceUri(id));
      const read = await client.readResource({ uri: todosResourceUri(id) });
      assert.deepEqual(JSON.parse((read.contents[0] as { text: string }).text).todos, [todo('Written elsewhere')]);
      await subscription.close();
    } finally {
      await client.close();
    }
  });

  test('the transport’s rules: no token is 401, a foreign Origin is 403 on every method, a foreign Host is 421, and nothing is applied', async () => {
    const id = uniqueId('mcp-http-guard');
    const url = `${bed.http.url}/sessions/${id}/mcp`;
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    });
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    assert.equal((await fetch(url, { method: 'POST', headers, body: initialize })).status, 401);
    const auth = { ...headers, Authorization: `Bearer ${TOKEN}` };
    assert.equal((await fetch(url, { method: 'POST', headers: { ...auth, Origin: 'http://evil.example' }, body: initialize })).status, 403);
    assert.equal((await fetch(url, { method: 'GET', headers: { ...auth, Origin: 'http://evil.example' } })).status, 403);
    assert.equal((await fetch(url, { method: 'POST', headers: { ...auth, Origin: bed.http.url }, body: initialize })).status, 200);
    const misdirected = await rawPost(url, { ...auth, Host: 'evil.example' }, initialize);
    assert.equal(misdirected, 421);
    const call = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'todo_write', arguments: { todos: [todo('From a page')] } } });
    assert.equal((await fetch(url, { method: 'POST', headers: { ...auth, Origin: 'http://evil.example' }, body: call })).status, 403);
    await assert.rejects(bed.client.todos(id), /no session/);
  });

  test('a GET (the 2025 stream, not served statelessly) is 405, a body over the limit is 413, and the endpoint goes on serving', async () => {
    const id = uniqueId('mcp-http-limits');
    const url = `${bed.http.url}/sessions/${id}/mcp`;
    const auth = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${TOKEN}` };
    const get = await fetch(url, { headers: { Accept: 'text/event-stream', Authorization: `Bearer ${TOKEN}` } });
    assert.equal(get.status, 405);
    assert.match(get.headers.get('Allow') ?? '', /POST/);
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'todo_write', arguments: { todos: Array.from({ length: 2_000 }, (_, i) => todo(`${i} ${'x'.repeat(1000)}`)) } },
    });
    const tooLarge = await fetch(url, { method: 'POST', headers: auth, body: huge });
    assert.equal(tooLarge.status, 413);
    assert.match(((await tooLarge.json()) as { error: string }).error, /larger than 1048576 bytes/);
    const client = await httpClient(id);
    try {
      assert.equal(text(await client.callTool({ name: 'todo_write', arguments: { todos: [todo('Still served')] } })), 'Updated todo list: 1 pending, 0 in progress, 0 completed');
    } finally {
      await client.close();
    }
    assert.equal(await acceptedWrites(id), 1);
  });

  test("a subagent's session is served at its URL-encoded id", async () => {
    const parent = uniqueId('mcp-parent');
    await bed.client.start(parent);
    const child = await bed.client.spawnSubagent(parent, { name: 'reviewer' });
    const client = await httpClient(child.sessionId);
    try {
      assert.equal(text(await client.callTool({ name: 'todo_write', arguments: { todos: [todo('Review', 'in_progress')] } })), 'Updated todo list: 0 pending, 1 in progress, 0 completed');
      const { resources } = await client.listResources();
      assert.equal(resources[0]!.uri, `session://${encodeURIComponent(child.sessionId)}/todos`);
    } finally {
      await client.close();
    }
    assert.deepEqual(await bed.client.todos(child.sessionId), [todo('Review', 'in_progress')]);
  });
});

/** A POST with a `Host` of the caller's choosing (fetch cannot set one). */
async function rawPost(url: string, headers: Record<string, string>, body: string): Promise<number> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe("MCP's conformance suite (@modelcontextprotocol/conformance)", () => {
  // The suite sends no token: a second service on the same client, without one, on loopback.
  let open: HttpServer;
  before(async () => {
    await bed.ready;
    open = await startHttpServer({ port: 0, client: bed.client, policy: POLICY });
  });
  after(() => open?.close());

  // The scenarios that apply to a server of our own; the others test the reference server's
  // fixtures (a `test_simple_text` tool, prompts, logging) that a session does not have.
  for (const scenario of ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection']) {
    test(`scenario ${scenario} passes`, async () => {
      const url = `${open.url.replace('127.0.0.1', 'localhost')}/sessions/${uniqueId('conformance')}/mcp`;
      const result = await new Promise<{ code: number | null; output: string }>((resolve) =>
        execFile(
          process.execPath,
          [join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js'), 'server', '--url', url, '--scenario', scenario],
          { timeout: 60_000 },
          (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), output: stdout + stderr }),
        ),
      );
      assert.equal(result.code, 0, result.output);
      assert.match(result.output, /Passed: (\d+)\/\1, 0 failed/);
    });
  }
});
