/**
 * Sessions over MCP, in two figures, each next to what a client does without MCP:
 *
 * - a `todo_write` as a `tools/call` through the HTTP service's Streamable HTTP endpoint
 *   (`/sessions/{id}/mcp`), by an MCP client that is already connected (the v1 SDK's client
 *   speaking the 2025-11-25 protocol, as the agent CLIs do today), next to the same write as
 *   `POST /sessions/{id}/todo_write` on the same service, alternating in one loop (≤ 1.10× p50). A
 *   third call in the loop takes the gap apart: the same `tools/call` POSTed with `fetch` and no
 *   MCP client, which is what the endpoint costs on its own;
 * - `agent-sessions mcp` as a whole process (the compiled CLI), from its spawn by a stdio MCP
 *   client to the answer to `tools/list`, next to `agent-sessions todos --json` as a whole
 *   process on an existing session, alternating (≤ 1.2× the median).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startHttpServer } from '../src/http/server';
import { countTodos, renderCounts } from '../src/todo';
import { pcts, type MeasurementResult, type Row } from './report';
import { interleaved, POLICY, todoList, type Bench } from './setup';
import { summarize } from './stats';

const SIZE = 3;
const WRITE_TARGET = 1.1;
const START_TARGET = 1.2;
const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'bin', 'agent-sessions.js');
const run = promisify(execFile);
const CLIENT_INFO = { name: 'agent-sessions-bench', version: '1.0.0' };
/** What the v1 client sends with a request once it is connected (the endpoint serves 2025 statelessly: no session id). */
const MCP_POST_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

/** A v1 (2025-11-25) MCP client connected to one session's Streamable HTTP endpoint. */
async function connectHttp(base: string, sessionId: string): Promise<Client> {
  const client = new Client(CLIENT_INFO);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/sessions/${encodeURIComponent(sessionId)}/mcp`)));
  return client;
}

/** The text of a tool's answer; throws unless it is the one text an accepted write answers. */
function acceptedText(result: unknown, expected: string): string {
  const { content, isError } = result as CallToolResult;
  const text = content.length === 1 && content[0]!.type === 'text' ? content[0]!.text : JSON.stringify(content);
  if (isError === true || text !== expected) throw new Error(`todo_write over MCP answered ${text.slice(0, 200)}, expected ${expected}`);
  return text;
}

async function post(url: string, args: unknown, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(args) });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${url} answered ${response.status}: ${text}`);
  return text;
}

/** `todo_write` over MCP's Streamable HTTP next to `POST …/todo_write`, on one HTTP service. */
async function measureWrite(bench: Bench, rows: Row[], notes: string[], figures: Record<string, unknown>): Promise<void> {
  const measured = bench.quick ? 60 : 500;
  const block = bench.quick ? 30 : 250;
  const warmup = bench.quick ? 3 : 10;
  const server = await startHttpServer({ client: bench.sessions, policy: POLICY, port: 0 });
  const viaMcp: number[] = [];
  const viaRest: number[] = [];
  const viaBarePost: number[] = [];
  let step = 0;
  let requestId = 0;
  try {
    while (viaMcp.length < measured) {
      const mid = bench.id('mcp-http');
      const rid = bench.id('mcp-rest');
      const pid = bench.id('mcp-post');
      const client = await connectHttp(server.url, mid);
      try {
        for (let i = 0; i < warmup + block && viaMcp.length < measured; i++) {
          const args = todoList(SIZE, step++);
          const expected = renderCounts(countTodos(args.todos));
          const [mcp, rest, barePost] = await interleaved(
            [
              async () => acceptedText(await client.callTool({ name: 'todo_write', arguments: { ...args } }), expected),
              () => post(`${server.url}/sessions/${encodeURIComponent(rid)}/todo_write`, args),
              // The same tools/call without the MCP client: what the endpoint costs on its own.
              async () => {
                const message = { jsonrpc: '2.0', id: ++requestId, method: 'tools/call', params: { name: 'todo_write', arguments: args } };
                const answer = await post(`${server.url}/sessions/${encodeURIComponent(pid)}/mcp`, message, MCP_POST_HEADERS);
                if (!answer.includes(expected)) throw new Error(`tools/call POSTed to the MCP endpoint answered ${answer.slice(0, 200)}`);
              },
            ],
            i,
          );
          if (i < warmup) continue;
          viaMcp.push(mcp!);
          viaRest.push(rest!);
          viaBarePost.push(barePost!);
        }
      } finally {
        await client.close();
      }
      await Promise.all([mid, rid, pid].map((id) => bench.sessions.close(id)));
    }
  } finally {
    await server.close();
  }
  const m = summarize(viaMcp);
  const r = summarize(viaRest);
  const p = summarize(viaBarePost);
  const ratio = m.p50 / r.p50;
  figures.write = {
    parameters: { size: SIZE, measured, iterationsPerSession: block, warmupPerSession: warmup, target: WRITE_TARGET },
    ms: { mcp: m, rest: r, barePostToMcpEndpoint: p },
    overheadMsP50: m.p50 - r.p50,
    parts: { endpointMsP50: p.p50 - r.p50, clientMsP50: m.p50 - p.p50 },
  };
  rows.push({
    measurement: `todo_write, ${SIZE} items: MCP tools/call (Streamable HTTP) vs POST …/todo_write`,
    ours: pcts(m),
    baseline: pcts(r),
    ratio,
    target: `≤ ${WRITE_TARGET}× p50`,
    met: ratio <= WRITE_TARGET,
  });
  notes.push(
    `todo_write over MCP adds ${(m.p50 - r.p50).toFixed(2)} ms at p50 (${(m.p95 - r.p95).toFixed(2)} ms at p95; ${m.n} writes each). Of it, in the same loop: ` +
      `the endpoint (the same tools/call POSTed with fetch, no MCP client: ${p.p50.toFixed(2)} ms) ${(p.p50 - r.p50).toFixed(2)} ms, ` +
      `and the v1 MCP client (its JSON-RPC request, the SSE answer's parsing, the result's schema check) the remaining ${(m.p50 - p.p50).toFixed(2)} ms.`,
  );
  bench.progress(`mcp write: p50 ${m.p50.toFixed(2)} vs ${r.p50.toFixed(2)} ms (the endpoint without the MCP client ${p.p50.toFixed(2)})`);
}

/** `agent-sessions mcp` from spawn to its `tools/list` answer next to `agent-sessions todos --json`, whole processes. */
async function measureStart(bench: Bench, rows: Row[], notes: string[], figures: Record<string, unknown>): Promise<void> {
  const measured = bench.quick ? 5 : 21;
  const warmup = 2;
  const id = bench.id('mcp-cli');
  const args = todoList(SIZE, 1);
  await bench.sessions.todoWrite(id, args);
  const expected = JSON.stringify(args.todos);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  Object.assign(env, { TEMPORAL_ADDRESS: bench.address, TEMPORAL_NAMESPACE: bench.namespace, AGENT_SESSIONS_TASK_QUEUE: bench.sessionQueue });
  delete env.NODE_OPTIONS; // the bench runs under tsx; the timed processes must not.

  const initialized: number[] = [];
  const mcpProcess = async (): Promise<number> => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--session', id, '--allow-parallel-in-progress', String(POLICY.allowParallelInProgress)],
      env,
      cwd: ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client(CLIENT_INFO);
    const start = performance.now();
    try {
      await client.connect(transport);
      initialized.push(performance.now() - start);
      const { tools } = await client.listTools();
      const ms = performance.now() - start;
      const names = tools.map((tool) => tool.name).join(',');
      if (names !== 'todo_write,todo_read') throw new Error(`agent-sessions mcp listed ${names}; stderr: ${stderr}`);
      return ms;
    } finally {
      await client.close();
    }
  };
  const todosProcess = async (): Promise<number> => {
    const start = performance.now();
    const { stdout } = await run(process.execPath, [CLI, 'todos', id, '--json'], { cwd: ROOT, env });
    const ms = performance.now() - start;
    if (stdout.trim() !== expected) throw new Error(`agent-sessions todos printed ${stdout.trim().slice(0, 200)}, expected ${expected}`);
    return ms;
  };

  const samples = { mcp: [] as number[], todos: [] as number[] };
  for (let i = 0; i < warmup + measured; i++) {
    const [mcp, todos] = await interleaved([mcpProcess, todosProcess], i);
    if (i < warmup) continue;
    samples.mcp.push(mcp!);
    samples.todos.push(todos!);
  }
  initialized.splice(0, warmup);
  await bench.sessions.close(id);
  const m = summarize(samples.mcp);
  const t = summarize(samples.todos);
  const init = summarize(initialized);
  const ratio = m.p50 / t.p50;
  figures.start = { parameters: { measured, warmup, target: START_TARGET }, ms: { mcpToToolsList: m, mcpToInitialize: init, todos: t } };
  rows.push({
    measurement: 'agent-sessions mcp, spawn → tools/list answer vs agent-sessions todos --json',
    ours: pcts(m),
    baseline: pcts(t),
    ratio,
    target: `≤ ${START_TARGET}× median`,
    met: ratio <= START_TARGET,
  });
  notes.push(
    `agent-sessions mcp: the initialize answer came ${init.p50.toFixed(0)} ms after the spawn (median), tools/list's ${(m.p50 - init.p50).toFixed(0)} ms later; ` +
      `it never calls Temporal before a tool does, while todos connects and queries (${measured} runs each).`,
  );
  bench.progress(`mcp start: ${m.p50.toFixed(0)} ms to tools/list vs todos ${t.p50.toFixed(0)} ms`);
}

export async function measureMcp(bench: Bench): Promise<MeasurementResult> {
  if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'mcp-command.js'))) {
    throw new Error('the mcp measurement times the compiled CLI: run `npm run build` first (npm ci does it)');
  }
  const rows: Row[] = [];
  const notes: string[] = [];
  const figures: Record<string, unknown> = {};
  await measureWrite(bench, rows, notes, figures);
  await measureStart(bench, rows, notes, figures);
  return {
    name: 'mcp',
    title: 'sessions over MCP — ms p50 / p95 / p99; baselines: the same write as POST …/todo_write, agent-sessions todos --json as a whole process',
    rows,
    figures,
    notes,
  };
}
