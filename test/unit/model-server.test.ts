import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { APIError, APIUserAbortError, AuthenticationError, BadRequestError, RateLimitError } from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import {
  BUNDLED_SCRIPTS,
  bundledScriptFile,
  loadScriptFile,
  ModelScriptError,
  parseScript,
  startModelServer,
  type ModelServer,
  type ScriptJson,
} from '../../src/model-server';
import { acceptTodoWrite } from '../../src/todo';
import { runCli, spawnCli } from '../helpers';

/** The tools the agent loop offers a model. */
const AGENT_TOOLS = ['todo_write', 'spawn_subagent', 'read_file', 'list_files'];

function tools(...names: string[]): ChatCompletionTool[] {
  return names.map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } }));
}

/** A small script: a tool call, then an answer that expects the tool's result. */
const TWO_STEPS: ScriptJson = {
  conversations: [
    {
      name: 'look',
      match: { firstUserMessage: '^List the files' },
      steps: [
        { expect: { toolsInclude: ['list_files'] }, respond: { content: 'Looking.', tool_calls: [{ name: 'list_files', arguments: { path: 'src' } }] } },
        { expect: { lastMessage: { role: 'tool', contentMatches: 'todo' } }, respond: { content: 'src holds todo/ and cli/.' } },
      ],
    },
    {
      name: 'busy',
      match: { firstUserMessage: '^Be busy' },
      steps: [{ respond: { content: 'finally', error: { status: 429, message: 'Rate limit reached (scripted)', times: 2, retryAfterMs: 20 } } }],
    },
    {
      name: 'slow',
      match: { firstUserMessage: '^Think slowly' },
      steps: [{ respond: { content: 'thought', delayMs: 30_000 } }],
    },
  ],
};

const LIST_FILES: ChatCompletionMessageParam[] = [{ role: 'user', content: 'List the files in src' }];

describe('the scripted model, through the official openai client', () => {
  let server: ModelServer;
  let openai: OpenAI;

  before(async () => {
    server = await startModelServer({ script: TWO_STEPS });
    openai = new OpenAI({ baseURL: server.url, apiKey: 'anything' });
  });
  after(() => server.close());

  test('a two-step conversation answers a tool call, then the answer that follows its result', async () => {
    server.reset();
    const first = await openai.chat.completions.create({ model: 'any-model', messages: LIST_FILES, tools: tools(...AGENT_TOOLS) });
    const choice = first.choices[0];
    assert.ok(choice);
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, 'Looking.');
    const call = choice.message.tool_calls?.[0];
    assert.ok(call !== undefined && call.type === 'function');
    assert.equal(call.id, 'call_look_0_0');
    assert.equal(call.function.name, 'list_files');
    assert.deepEqual(JSON.parse(call.function.arguments), { path: 'src' }, 'arguments travel as the JSON string the wire format wants');
    assert.equal(first.model, 'any-model');
    assert.equal(first.object, 'chat.completion');
    assert.equal(first.usage?.total_tokens, (first.usage?.prompt_tokens ?? 0) + (first.usage?.completion_tokens ?? 0));

    const second = await openai.chat.completions.create({
      model: 'any-model',
      tools: tools(...AGENT_TOOLS),
      messages: [...LIST_FILES, choice.message, { role: 'tool', tool_call_id: call.id, content: 'todo/\ncli/' }],
    });
    assert.equal(second.choices[0]?.finish_reason, 'stop');
    assert.equal(second.choices[0]?.message.content, 'src holds todo/ and cli/.');
    assert.equal(second.choices[0]?.message.tool_calls, undefined);
    assert.deepEqual(
      server.requests().map(({ conversation, step, status, completed, inFlight }) => ({ conversation, step, status, completed, inFlight })),
      [
        { conversation: 'look', step: 0, status: 200, completed: true, inFlight: false },
        { conversation: 'look', step: 1, status: 200, completed: true, inFlight: false },
      ],
    );
  });

  test('the same request twice gets the same answer, tool call ids included', async () => {
    const request = { model: 'any-model', messages: LIST_FILES, tools: tools('list_files') };
    const a = await openai.chat.completions.create(request);
    const b = await openai.chat.completions.create(request);
    assert.deepEqual(a, b);
    assert.equal(a.choices[0]?.message.tool_calls?.[0]?.id, 'call_look_0_0');
  });

  test('a failed expectation is a 400 APIError saying which conversation, which step, what was expected and what came', async () => {
    const error = await openai.chat.completions
      .create({ model: 'm', tools: tools('list_files'), messages: [...LIST_FILES, { role: 'assistant', content: 'Looking.' }, { role: 'user', content: 'go on' }] })
      .then(() => assert.fail('an unmet expectation must be refused'), (e: unknown) => e);
    assert.ok(error instanceof APIError && error instanceof BadRequestError);
    assert.equal(error.status, 400);
    assert.equal(error.code, 'scripted_expectation_failed');
    assert.match(error.message, /conversation "look", step 1 expected the last message to be a "tool" message whose content matches \/todo\/; it is a "user" message: "go on"/);

    const noTools = await openai.chat.completions.create({ model: 'm', messages: LIST_FILES }).catch((e: unknown) => e);
    assert.ok(noTools instanceof BadRequestError);
    assert.match(noTools.message, /step 0 expected the offered tools to include list_files; the request offers no tools/);
  });

  test('a request no conversation matches, or past the end of its conversation, is a 400 that says so', async () => {
    const unmatched = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Sing' }] }).catch((e: unknown) => e);
    assert.ok(unmatched instanceof BadRequestError);
    assert.match(unmatched.message, /no conversation matches this request: its first user message is "Sing"; .*"look" \(\/\^List the files\/\)/);

    const ended = await openai.chat.completions
      .create({ model: 'm', messages: [...LIST_FILES, { role: 'assistant', content: 'a' }, { role: 'assistant', content: 'b' }] })
      .catch((e: unknown) => e);
    assert.ok(ended instanceof BadRequestError);
    assert.match(ended.message, /conversation "look" has 2 step\(s\) \(0 to 1\), but the request already holds 2 assistant message\(s\), so it asks for step 2: the script has ended/);
  });

  test('a scripted 429 with times is retried by the openai client itself, and the log shows every attempt', async () => {
    server.reset();
    assert.equal(openai.maxRetries, 2, 'the client retries twice by default');
    const answer = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Be busy' }] });
    assert.equal(answer.choices[0]?.message.content, 'finally');
    assert.deepEqual(server.requests().map((r) => [r.conversation, r.step, r.status]), [
      ['busy', 0, 429],
      ['busy', 0, 429],
      ['busy', 0, 200],
    ]);

    server.reset();
    const impatient = new OpenAI({ baseURL: server.url, apiKey: 'anything', maxRetries: 0 });
    const error = await impatient.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Be busy' }] }).catch((e: unknown) => e);
    assert.ok(error instanceof RateLimitError);
    assert.match(error.message, /^429 Rate limit reached \(scripted\)/);
    assert.equal(error.type, 'rate_limit_error');
  });

  test('a client that disconnects while the answer is delayed is logged as not completed', async () => {
    server.reset();
    const abort = new AbortController();
    const call = openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Think slowly' }] }, { signal: abort.signal });
    const inFlight = await server.waitForRequest((r) => r.conversation === 'slow' && r.inFlight);
    assert.deepEqual([inFlight.status, inFlight.completed], [200, false]);
    abort.abort();
    await assert.rejects(call, (e: unknown) => e instanceof APIUserAbortError);
    const settled = await server.waitForRequest((r) => r.seq === inFlight.seq && !r.inFlight);
    assert.equal(settled.completed, false);
    assert.equal(server.requests().length, 1, 'an aborted call is not retried by the client');
  });

  test('a caller killed while its answer is delayed is logged as not completed', async () => {
    server.reset();
    // What the durability tests do to a worker: SIGKILL, so no client code runs to close anything.
    const caller = spawn(process.execPath, [
      '-e',
      `fetch(${JSON.stringify(`${server.url}/chat/completions`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, ` +
        `body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Think slowly' }] }) })`,
    ]);
    const exited = new Promise((resolve) => caller.once('exit', resolve));
    const inFlight = await server.waitForRequest((r) => r.conversation === 'slow' && r.inFlight);
    caller.kill('SIGKILL');
    await exited;
    const settled = await server.waitForRequest((r) => r.seq === inFlight.seq && !r.inFlight);
    assert.deepEqual([settled.step, settled.completed], [0, false]);
  });

  test('stream: true answers Server-Sent Events chunks that the openai client puts back together into the very answer it gets without streaming', async () => {
    server.reset();
    const plain = await openai.chat.completions.create({ model: 'm', messages: LIST_FILES, tools: tools(...AGENT_TOOLS) });
    const streamed = await openai.chat.completions
      .stream({ model: 'm', messages: LIST_FILES, tools: tools(...AGENT_TOOLS), stream_options: { include_usage: true } })
      .finalChatCompletion();
    assert.equal(streamed.choices[0]?.message.content, plain.choices[0]?.message.content);
    assert.deepEqual(
      streamed.choices[0]?.message.tool_calls?.map((call) => (call.type === 'function' ? [call.id, call.function.name, call.function.arguments] : [])),
      plain.choices[0]?.message.tool_calls?.map((call) => (call.type === 'function' ? [call.id, call.function.name, call.function.arguments] : [])),
    );
    assert.equal(streamed.choices[0]?.finish_reason, 'tool_calls');
    assert.deepEqual(streamed.usage, plain.usage, 'include_usage brings the same usage in a last chunk');
    const [asPlain, asStream] = server.requests();
    assert.deepEqual([asPlain?.stream, asPlain?.streamed, asPlain?.firstTokenAt], [false, false, null]);
    assert.deepEqual([asStream?.stream, asStream?.streamed, asStream?.completed], [true, true, true]);
    assert.match(asStream?.firstTokenAt ?? '', /^\d{4}-\d\d-\d\dT/);
  });

  test('text streams a token (4 characters) per chunk, and without include_usage no usage chunk is sent', async () => {
    const chunks = [];
    for await (const chunk of await openai.chat.completions.create({ model: 'm', messages: LIST_FILES, tools: tools(...AGENT_TOOLS), stream: true })) chunks.push(chunk);
    const texts = chunks.map((chunk) => chunk.choices[0]?.delta.content).filter((text) => text !== undefined && text !== null && text !== '');
    assert.deepEqual(texts, ['Look', 'ing.']);
    assert.ok(chunks.every((chunk) => chunk.usage === undefined || chunk.usage === null));
    assert.equal(chunks.find((chunk) => chunk.choices[0]?.delta.tool_calls?.[0]?.function?.name !== undefined)?.choices[0]?.delta.tool_calls?.[0]?.id, 'call_look_0_0');
  });

  test('a model started to refuse streaming answers stream: true with a 400 that says so; one started to answer JSON ignores it', async () => {
    const refusing = await startModelServer({ script: TWO_STEPS, streaming: { mode: 'refuse' } });
    const ignoring = await startModelServer({ script: TWO_STEPS, streaming: { mode: 'json' } });
    try {
      const client = new OpenAI({ baseURL: refusing.url, apiKey: 'anything' });
      const error = await client.chat.completions.create({ model: 'm', messages: LIST_FILES, stream: true }).catch((e: unknown) => e);
      assert.ok(error instanceof BadRequestError);
      assert.match(error.message, /this scripted model does not stream/);
      const response = await fetch(`${ignoring.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: LIST_FILES, tools: tools(...AGENT_TOOLS), stream: true }),
      });
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(((await response.json()) as any).choices[0].message.content, 'Looking.');
      assert.deepEqual(ignoring.requests().map((r) => [r.stream, r.streamed]), [[true, false]]);
    } finally {
      await Promise.all([refusing.close(), ignoring.close()]);
    }
  });

  test('GET /v1/models lists the one scripted model', async () => {
    const models = await openai.models.list();
    assert.deepEqual(models.data.map((m) => m.id), ['scripted']);
    assert.equal((await openai.models.retrieve('scripted')).id, 'scripted');
  });

  test('the request log is served at /_scripted/requests, and reset empties it', async () => {
    server.reset();
    await openai.chat.completions.create({ model: 'm', messages: LIST_FILES, tools: tools('list_files') });
    const base = server.url.replace(/\/v1$/, '');
    const served = (await (await fetch(`${base}/_scripted/requests`)).json()) as any;
    assert.deepEqual(served.requests, server.requests());
    assert.equal((await fetch(`${base}/_scripted/reset`, { method: 'POST' })).status, 200);
    assert.deepEqual(server.requests(), []);
  });

  test('malformed bodies, unknown paths, wrong methods and foreign Host names get errors in OpenAI\'s shape', async () => {
    const post = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<Response> =>
      fetch(`${server.url}/chat/completions`, { method: 'POST', headers, body });

    const malformed = await post('{"model": "m", "messages": [');
    assert.equal(malformed.status, 400);
    const error = ((await malformed.json()) as any).error;
    assert.equal(error.code, 'invalid_json');
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /could not parse the JSON body/);

    const wrongShape = await post(JSON.stringify({ model: 'm', messages: [{ role: 'robot', content: 'hi' }] }));
    assert.equal(wrongShape.status, 400);
    assert.match(((await wrongShape.json()) as any).error.message, /messages\[0\]\.role/);

    assert.equal((await post('{}', { 'content-type': 'text/plain' })).status, 415);
    assert.equal((await fetch(`${server.url}/chat/completions`)).status, 405);

    const unknown = await fetch(`${server.url}/embeddings`, { method: 'POST' });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as any).error.code, 'unknown_url');

    // fetch refuses to set Host, so the rebinding check is reached with node:http.
    const { request } = await import('node:http');
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${server.url}/models`, { headers: { host: 'attacker.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 403);
  });
});

test('with an API key, the scripted model refuses a request without it and answers one with it', async () => {
  const server = await startModelServer({ script: TWO_STEPS, apiKey: 'sk-scripted' });
  try {
    const wrong = new OpenAI({ baseURL: server.url, apiKey: 'sk-other' });
    const error = await wrong.models.list().catch((e: unknown) => e);
    assert.ok(error instanceof AuthenticationError);
    assert.equal(error.code, 'invalid_api_key');
    const right = new OpenAI({ baseURL: server.url, apiKey: 'sk-scripted' });
    assert.equal((await right.models.list()).data.length, 1);
  } finally {
    await server.close();
  }
});

describe('the bundled scripts', () => {
  for (const name of BUNDLED_SCRIPTS) {
    test(`${name} parses, calls only the agent's four tools (and the filesystem MCP server's, mcp__fs__*, for the tools walk-through), and its todo lists are judged as it declares`, () => {
      const script = loadScriptFile(bundledScriptFile(name));
      assert.ok(script.policy, `${name} declares the policy its lists were written for`);
      for (const conversation of script.conversations) {
        for (const step of conversation.steps) {
          for (const call of step.respond.tool_calls ?? []) {
            const where = `${name}: conversation ${conversation.name}, step ${step.index}`;
            assert.ok(AGENT_TOOLS.includes(call.name) || (name === 'edit-file' && call.name.startsWith('mcp__fs__')), `${where} calls ${call.name}`);
            if (call.name !== 'todo_write') continue;
            if (call.expectRejected === true) assert.throws(() => acceptTodoWrite(call.arguments, script.policy!), where);
            else assert.doesNotThrow(() => acceptTodoWrite(call.arguments, script.policy!), where);
          }
        }
      }
    });
  }

  test('the subagent fan-out answers the parent and both children, and the parent expects both children\'s answers', async () => {
    const server = await startModelServer({ scriptFile: bundledScriptFile('subagents') });
    try {
      const openai = new OpenAI({ baseURL: server.url, apiKey: 'anything' });
      const ask = (messages: ChatCompletionMessageParam[]) => openai.chat.completions.create({ model: 'm', messages, tools: tools(...AGENT_TOOLS) });
      const parent: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Update the tests and the docs for the --verbose flag' }];
      const results = ['Updated todo list: 3 pending, 0 in progress, 0 completed', 'Updated todo list: 1 pending, 2 in progress, 0 completed'];
      for (const result of results) {
        const message = (await ask(parent)).choices[0]!.message;
        parent.push(message, { role: 'tool', tool_call_id: message.tool_calls![0]!.id, content: result });
      }
      const spawn = (await ask(parent)).choices[0]!.message;
      const spawns = spawn.tool_calls!.map((call) => (call.type === 'function' ? JSON.parse(call.function.arguments) : undefined));
      assert.deepEqual(spawns.map((s) => s.name), ['tests', 'docs'], 'two spawns in one answer');
      const finals: string[] = [];
      for (const { task } of spawns) {
        const child: ChatCompletionMessageParam[] = [{ role: 'user', content: task }];
        const counts = ['1 pending, 1 in progress, 0 completed', '0 pending, 0 in progress, 2 completed'];
        for (const count of counts) {
          const message = (await ask(child)).choices[0]!.message;
          child.push(message, { role: 'tool', tool_call_id: message.tool_calls![0]!.id, content: `Updated todo list: ${count}` });
        }
        finals.push((await ask(child)).choices[0]!.message.content!);
      }
      // The children's answers come back in the opposite order: results are found by call id.
      parent.push(spawn, { role: 'tool', tool_call_id: 'call_parent_2_1', content: finals[1]! }, { role: 'tool', tool_call_id: 'call_parent_2_0', content: finals[0]! });
      const done = (await ask(parent)).choices[0]!.message;
      assert.ok(done.tool_calls?.[0]?.type === 'function' && done.tool_calls[0].function.arguments.includes('completed'));

      const swapped = [...parent.slice(0, -2), { role: 'tool' as const, tool_call_id: 'call_parent_2_0', content: finals[1]! }, { role: 'tool' as const, tool_call_id: 'call_parent_2_1', content: finals[0]! }];
      const error = await ask(swapped).catch((e: unknown) => e);
      assert.ok(error instanceof BadRequestError);
      assert.match(error.message, /conversation "parent", step 3 expected the result of tool call 0 \(call_parent_2_0\) whose content matches \/Tests added for --verbose\//);
    } finally {
      await server.close();
    }
  });
});

describe('a malformed script is refused with a message naming the file, the conversation and the step', () => {
  const todoWrite = (statuses: string[]) => ({
    name: 'todo_write',
    arguments: { todos: statuses.map((status, i) => ({ content: `Step ${i + 1}`, status })) },
  });
  const cases: [string, unknown, RegExp][] = [
    ['an unknown property', { conversations: [{ name: 'a', match: { firstUserMessage: 'x' }, steps: [{ respond: { content: 'x', delay: 5 } }] }] }, /conversation "a", step 0: respond: Unrecognized key: "delay"/],
    ['a pattern that does not compile', { conversations: [{ name: 'a', match: { firstUserMessage: 'x' }, steps: [{ respond: { content: 'x' } }, { expect: { lastMessage: { contentMatches: '(' } }, respond: { content: 'y' } }] }] }, /conversation "a", step 1: expect\.lastMessage\.contentMatches: not a valid regular expression/],
    ['two conversations with one name', { conversations: [1, 2].map(() => ({ name: 'a', match: { firstUserMessage: 'x' }, steps: [{ respond: { content: 'x' } }] })) }, /conversation "a": another conversation has the same name/],
    ['a step that answers nothing', { conversations: [{ name: 'a', match: { firstUserMessage: 'x' }, steps: [{ respond: { delayMs: 10 } }] }] }, /conversation "a", step 0: respond has neither "content" nor "tool_calls"/],
    ['tool results expected without as many calls', { conversations: [{ name: 'a', match: { firstUserMessage: 'x' }, steps: [{ respond: { content: 'x' } }, { expect: { toolResults: [{ contentMatches: 'y' }] }, respond: { content: 'y' } }] }] }, /conversation "a", step 1: expect\.toolResults lists 1 result\(s\), but the previous step makes 0 tool call\(s\)/],
    ['a todo list the declared policy refuses', { policy: { allowParallelInProgress: false }, conversations: [{ name: 'a', match: { firstUserMessage: 'x' }, steps: [{ respond: { tool_calls: [todoWrite(['in_progress', 'in_progress'])] } }] }] }, /conversation "a", step 0, respond\.tool_calls\[0\] \(todo_write\): the list is refused under allowParallelInProgress=false \(.*\[parallel-in-progress\]\); fix it, or mark the call "expectRejected": true/],
    ['an expected rejection that is accepted', { policy: { allowParallelInProgress: true }, conversations: [{ name: 'a', match: { firstUserMessage: 'x' }, steps: [{ respond: { tool_calls: [{ ...todoWrite(['in_progress', 'in_progress']), expectRejected: true }] } }] }] }, /the call is marked "expectRejected" but the list is accepted under allowParallelInProgress=true/],
    ['a conversation name unfit for tool call ids', { conversations: [{ name: 'a b', match: { firstUserMessage: 'x' }, steps: [{ respond: { content: 'x' } }] }] }, /conversation "a b": name: a conversation name is 1-40 letters/],
  ];
  for (const [what, json, message] of cases) {
    test(what, () => {
      assert.throws(() => parseScript(json, 'bad.json'), (error: unknown) => {
        assert.ok(error instanceof ModelScriptError, String(error));
        assert.equal(error.code, 'invalid-setting');
        assert.match(error.message, /^the model script bad\.json is malformed: /);
        assert.match(error.message, message);
        return true;
      });
    });
  }
});

describe('agent-sessions model-server', () => {
  test('starts on a free port, says it is scripted, answers the openai client, and exits on SIGINT', async () => {
    const cli = await spawnCli(['model-server', '--script', 'lint-fix', '--port', '0']);
    try {
      const deadline = Date.now() + 20_000;
      let banner: RegExpExecArray | null = null;
      while (banner === null && Date.now() < deadline) {
        banner = /^scripted model \(not a real model: answers come from (\S+)\) at (http:\/\/127\.0\.0\.1:\d+\/v1) — 1 conversation$/m.exec(cli.output());
        if (banner === null) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(banner, `the banner line, got: ${cli.output()}`);
      assert.match(banner[1]!, /models\/lint-fix\.json$/);
      const openai = new OpenAI({ baseURL: banner[2]!, apiKey: 'anything' });
      const answer = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Fix the lint errors' }], tools: tools('todo_write') });
      assert.equal(answer.choices[0]?.message.tool_calls?.[0]?.id, 'call_lint_0_0');
      cli.child.kill('SIGINT');
      assert.equal(await cli.exited, 0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
  });

  test('a malformed script file ends it with exit code 2 and a message naming the file and the problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-script-'));
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ conversations: [{ name: 'main', match: { firstUserMessage: 'x' }, steps: [{ respond: { content: 'x', delayMs: -1 } }] }] }));
    const result = await runCli(['model-server', '--script', broken, '--port', '0']);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, new RegExp(`the model script ${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is malformed: conversation "main", step 0: respond\\.delayMs: Too small`));

    const notJson = join(dir, 'not-json.json');
    writeFileSync(notJson, '{ "conversations": ');
    const second = await runCli(['model-server', '--script', notJson]);
    assert.equal(second.code, 2);
    assert.match(second.stderr, /the model script .*not-json\.json is not valid JSON/);

    const missing = await runCli(['model-server', '--script', join(dir, 'absent.json')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read the model script .*absent\.json: ENOENT/);
  });
});
