/**
 * The "done when" for sessions served over MCP, with clients that no one here wrote:
 * configured only as docs/mcp.md tells a user, each writes a list that `agent-sessions todos` and
 * the dashboard's read show, is refused with the rule's words when it breaks one (and the refused
 * write is not in history), and reads the list back after reconnecting.
 *
 * - OpenCode (npm `opencode-ai`, whose MCP client speaks the 2025-11-25 protocol), a real agent
 *   CLI run non-interactively (`opencode run`) with a project `opencode.json` that adds the
 *   session as an MCP server and points the agent at the scripted model, whose answers (the tool
 *   calls) come from its script; every step of the script checks what the agent sent it, so a
 *   step answered means the model was shown the tool's result, the refusal's words among them.
 * - The official Python MCP SDK (PyPI `mcp`, which speaks 2026-07-28 to this server),
 *   test/fixtures/mcp-python-client.py.
 *
 * Each over stdio (`agent-sessions mcp`) and over Streamable HTTP (`/sessions/{id}/mcp` with the
 * bearer token). Both are installed into the per-user cache on first use (test/foreign-mcp-clients.ts);
 * a machine that cannot install them fails here, saying what to install.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startModelServer, type ModelServer, type ScriptJson } from '../../src/model-server';
import type { TodoList } from '../../src/todo';
import { ensureOpencode, ensurePythonMcp } from '../foreign-mcp-clients';
import { assertRejected, countAcceptedUpdates, httpCall, ROOT, runCli, temporalAddress, todo, uniqueId, useTestBed } from '../helpers';

const POLICY = { allowParallelInProgress: false };
const TOKEN = 'foreign-client-token';
/** The worker and the HTTP service (with a token) run the single-in-progress policy, as the MCP servers say. */
const bed = useTestBed('mcp-foreign', POLICY, { http: { policy: POLICY, token: TOKEN } });

/** The list every client writes, and the write that breaks the policy: two items in progress. */
const PLAN = [todo('Tag the release', 'in_progress'), todo('Write the notes')];
const TWO_IN_PROGRESS = [todo('Tag the release', 'in_progress'), todo('Write the notes', 'in_progress')];
const ACCEPTED = 'Updated todo list: 1 pending, 1 in progress, 0 completed';

/** The name the clients give the server; OpenCode calls its tools `<server>_<tool>`. */
const SERVER_NAME = 'agent-sessions';

/** The two transports each client is configured for. */
const TRANSPORTS = ['stdio', 'http'] as const;
type Transport = (typeof TRANSPORTS)[number];

/** The `agent-sessions mcp` command line a stdio client starts for `sessionId`, as docs/mcp.md gives it. */
function stdioCommand(sessionId: string): string[] {
  return [process.execPath, join(ROOT, 'bin', 'agent-sessions.js'), 'mcp', '--session', sessionId, '--allow-parallel-in-progress', 'false'];
}

/** The environment docs/mcp.md tells a user to give `agent-sessions mcp`: where Temporal is, and the task queue. */
async function stdioEnvironment(): Promise<Record<string, string>> {
  return { TEMPORAL_ADDRESS: await temporalAddress(), AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue };
}

/** The session's MCP endpoint on the HTTP service. */
function mcpUrl(sessionId: string): string {
  return `${bed.http.url}/sessions/${encodeURIComponent(sessionId)}/mcp`;
}

/**
 * What a foreign client must have left in the session: the list, as `agent-sessions todos` prints
 * it and as the dashboard reads it (`GET /sessions/{id}/todos`), from one accepted write; and the
 * refusal's sentence, which must be the one the library gives for the same write.
 */
async function assertSessionAfterForeignClient(sessionId: string, refusal: string): Promise<void> {
  const printed = await runCli(['todos', sessionId], { env: { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue } });
  assert.equal(printed.code, 0, printed.stderr);
  assert.equal(printed.stdout.trim(), '[>] Tag the release\n[ ] Write the notes');

  const read = await httpCall(bed.http.url, 'GET', `/sessions/${encodeURIComponent(sessionId)}/todos`, undefined, { Authorization: `Bearer ${TOKEN}` });
  assert.equal(read.status, 200, JSON.stringify(read.json));
  assert.deepEqual(read.json as TodoList, PLAN);

  assert.equal(countAcceptedUpdates(await bed.client.exportHistory(sessionId)), 1, 'the refused write reached history');
  const library = await assertRejected(bed.client.todoWrite(sessionId, { todos: TWO_IN_PROGRESS }), 'parallel-in-progress');
  assert.equal(refusal, library.message, 'the client was not given the rule’s words');
}

describe('OpenCode, an agent CLI driven by a scripted model', () => {
  /** The tool names OpenCode gives the model for the session's tools. */
  const WRITE = `${SERVER_NAME}_todo_write`;
  const READ = `${SERVER_NAME}_todo_read`;

  /**
   * The model behind OpenCode: the first run plans (accepted), breaks the rule (refused) and
   * answers; the second, a new OpenCode process and so a new connection, reads the list back.
   * Each step after a tool call checks the result OpenCode gave the model.
   */
  const OPENCODE_SCRIPT: ScriptJson = {
    description: 'OpenCode keeps its plan in an agent-sessions session over MCP.',
    model: 'scripted-opencode',
    conversations: [
      {
        name: 'plan',
        match: { firstUserMessage: 'Plan the release' },
        steps: [
          { expect: { toolsInclude: [WRITE, READ] }, respond: { tool_calls: [{ name: WRITE, arguments: { todos: PLAN } }] } },
          {
            expect: { lastMessage: { role: 'tool', contentMatches: `^${ACCEPTED}$` } },
            respond: { tool_calls: [{ name: WRITE, arguments: { todos: TWO_IN_PROGRESS } }] },
          },
          {
            note: 'The refusal reached the model with the rule that was broken.',
            expect: { lastMessage: { role: 'tool', contentMatches: '\\[parallel-in-progress\\]' } },
            respond: { content: 'Planned; one item at a time is in progress.' },
          },
        ],
      },
      {
        name: 'resume',
        match: { firstUserMessage: 'Resume the release' },
        steps: [
          { expect: { toolsInclude: [READ] }, respond: { tool_calls: [{ name: READ, arguments: {} }] } },
          {
            expect: { lastMessage: { role: 'tool', contentMatches: '"todos":\\[\\{"content":"Tag the release","status":"in_progress"\\},\\{"content":"Write the notes","status":"pending"\\}\\]' } },
            respond: { content: 'Resuming: Tag the release is in progress.' },
          },
        ],
      },
    ],
  };

  let opencode: string;
  let model: ModelServer;
  before(async () => {
    [opencode, model] = await Promise.all([ensureOpencode(), startModelServer({ script: OPENCODE_SCRIPT })]);
  });
  after(() => model?.close());

  /** The project `opencode.json`: the session as an MCP server over `transport`, and the scripted model as the agent's. */
  async function opencodeConfig(sessionId: string, transport: Transport): Promise<object> {
    const server =
      transport === 'stdio'
        ? { type: 'local', command: stdioCommand(sessionId), environment: await stdioEnvironment() }
        : { type: 'remote', url: mcpUrl(sessionId), headers: { Authorization: `Bearer ${TOKEN}` } };
    return {
      $schema: 'https://opencode.ai/config.json',
      model: 'scripted/scripted-opencode',
      provider: {
        scripted: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Scripted model',
          options: { baseURL: model.url, apiKey: 'unused' },
          models: { 'scripted-opencode': { name: 'Scripted model' } },
        },
      },
      mcp: { [SERVER_NAME]: server },
    };
  }

  /** One tool call as `opencode run --format json` reports it. */
  interface ToolUse {
    tool: string;
    status: string;
    output?: string;
    error?: string;
  }

  /**
   * `opencode run --format json PROMPT` in `project`, with a home of its own (no user's config or
   * state) and nothing of this process's environment but PATH: what OpenCode knows of the session
   * comes from `opencode.json` alone. Answers the tool calls it reports and its final text.
   */
  async function runOpencode(project: string, prompt: string): Promise<{ tools: ToolUse[]; text: string }> {
    const home = join(project, '.home');
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_CACHE_HOME: join(home, '.cache'),
      XDG_STATE_HOME: join(home, '.local', 'state'),
      // Nothing from the internet: the model catalogue, updates, language servers.
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    };
    // --title: no extra model call to name OpenCode's own session.
    const args = ['run', '--pure', '--format', 'json', '--title', 'release', prompt];
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      const child = execFile(opencode, args, { cwd: project, env, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 }, (error, out, err) =>
        error !== null ? reject(new Error(`opencode ${args.join(' ')} failed (${error.code ?? error.signal}):\n${err}\n${out}`)) : resolve({ stdout: out, stderr: err }),
      );
      // `opencode run` reads a piped stdin into the message: it gets none.
      child.stdin?.end();
    });
    const events = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; part: { tool?: string; text?: string; state?: { status: string; output?: string; error?: string } } });
    const tools = events.filter((event) => event.type === 'tool_use').map(({ part }) => ({ tool: part.tool ?? '', ...part.state! }) as ToolUse);
    const text = events.filter((event) => event.type === 'text').map(({ part }) => part.text ?? '').join('');
    assert.ok(events.length > 0, `opencode printed no events; its stderr:\n${stderr}`);
    return { tools, text };
  }

  /** The steps of `conversation` the scripted model answered, with the status of each. */
  function answeredSteps(conversation: string): Array<[number | null, number]> {
    return model
      .requests()
      .filter((request) => request.conversation === conversation)
      .map((request) => [request.step, request.status]);
  }

  for (const transport of TRANSPORTS) {
    test(`over ${transport === 'stdio' ? 'stdio (a local server)' : 'Streamable HTTP (a remote server with the token)'}: writes a list that todos and the dashboard show, is refused with the rule’s words, and reads the list back in a new run`, async () => {
      const id = uniqueId(`opencode-${transport}`);
      const project = mkdtempSync(join(tmpdir(), 'agent-sessions-opencode-'));
      try {
        writeFileSync(join(project, 'opencode.json'), JSON.stringify(await opencodeConfig(id, transport), null, 2));
        model.reset();

        const first = await runOpencode(project, 'Plan the release');
        assert.deepEqual(
          first.tools.map(({ tool, status }) => [tool, status]),
          [
            [WRITE, 'completed'],
            [WRITE, 'error'],
          ],
        );
        assert.equal(first.tools[0]!.output, ACCEPTED);
        assert.match(first.tools[1]!.error ?? '', /\[parallel-in-progress\]/);
        assert.deepEqual(answeredSteps('plan'), [
          [0, 200],
          [1, 200],
          [2, 200],
        ]);
        assert.equal(first.text, 'Planned; one item at a time is in progress.');
        await assertSessionAfterForeignClient(id, first.tools[1]!.error!);

        const again = await runOpencode(project, 'Resume the release');
        assert.deepEqual(
          again.tools.map(({ tool, status }) => [tool, status]),
          [[READ, 'completed']],
        );
        assert.deepEqual((JSON.parse(again.tools[0]!.output!) as { todos: TodoList }).todos, PLAN);
        assert.deepEqual(answeredSteps('resume'), [
          [0, 200],
          [1, 200],
        ]);
        assert.equal(countAcceptedUpdates(await bed.client.exportHistory(id)), 1);
      } finally {
        rmSync(project, { recursive: true, force: true });
      }
    });
  }
});

describe('the official Python MCP SDK', () => {
  /** What test/fixtures/mcp-python-client.py prints. */
  interface PythonReport {
    protocolVersion: string;
    serverName: string | null;
    tools: string[];
    accepted: { isError: boolean; text: string };
    refused: { isError: boolean; text: string };
    reread: { isError: boolean; reading: { sessionId: string; todos: TodoList; version: number } };
    resources: string[];
    resource?: { todos: TodoList };
  }

  let python: string;
  before(async () => {
    python = await ensurePythonMcp();
  });

  /** Runs the Python client with `config` (see the fixture) and answers its report. */
  function runPythonClient(config: object): Promise<PythonReport> {
    const script = join(ROOT, 'test', 'fixtures', 'mcp-python-client.py');
    return new Promise((resolve, reject) =>
      execFile(python, [script, JSON.stringify(config)], { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
        error !== null ? reject(new Error(`the Python MCP client failed (${error.code ?? error.signal}):\n${stderr}`)) : resolve(JSON.parse(stdout) as PythonReport),
      ),
    );
  }

  for (const transport of TRANSPORTS) {
    test(`over ${transport === 'stdio' ? 'stdio' : 'Streamable HTTP with the token'}: lists the tools, writes a list that todos and the dashboard show, is refused with the rule’s words, and reads the list back after reconnecting`, async () => {
      const id = uniqueId(`python-${transport}`);
      const writes = { accepted: { todos: PLAN }, refused: { todos: TWO_IN_PROGRESS } };
      const [command, ...args] = stdioCommand(id);
      const config =
        transport === 'stdio'
          ? { transport, command, args, env: await stdioEnvironment(), ...writes }
          : { transport, url: mcpUrl(id), token: TOKEN, ...writes };

      const report = await runPythonClient(config);
      // The SDK's default mode finds the newest protocol; OpenCode (above) speaks the 2025-11-25 handshake.
      assert.equal(report.protocolVersion, '2026-07-28');
      assert.equal(report.serverName, 'agent-sessions');
      assert.deepEqual(report.tools, ['todo_write', 'todo_read']);
      assert.deepEqual(report.accepted, { isError: false, text: ACCEPTED });
      assert.equal(report.refused.isError, true);
      assert.match(report.refused.text, /\[parallel-in-progress\]/);
      assert.equal(report.reread.isError, false);
      assert.equal(report.reread.reading.sessionId, id);
      assert.deepEqual(report.reread.reading.todos, PLAN);
      assert.deepEqual(report.resources, [`session://${encodeURIComponent(id)}/todos`]);
      assert.deepEqual(report.resource?.todos, PLAN);
      await assertSessionAfterForeignClient(id, report.refused.text);
    });
  }
});
