import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import type { ErrorCode } from '../../src/client';
import type { RejectionRule } from '../../src/todo';
import { ROOT, todo, uniqueId, useTestBed } from '../helpers';

/**
 * The HTTP API checked against its own OpenAPI document by Schemathesis (PyPI), every check on,
 * driven by nothing but `GET /openapi.json`: answers and their statuses, headers, content types
 * and schemas (the Server-Sent Events included), requests the document allows accepted and those
 * it forbids refused, 405 for a method a path lacks. `scripts/ensure-schemathesis.sh` installs it
 * into the per-user cache the first time. Bounded in count (examples per operation, stateful
 * steps) and time, against this machine's loopback only.
 */

const bed = useTestBed('http-contract', { allowParallelInProgress: false }, { http: { policy: { allowParallelInProgress: false }, pollMs: 100 } });

/**
 * The rules under which the service refuses (412 or 422) a request its document allows, because
 * JSON Schema cannot state them; every other rule is in the document, and a refusal under it of an
 * allowed request fails the run (`test/fixtures/schemathesis_hooks.py`).
 */
const UNSTATABLE_RULES = {
  'duplicate-content': 'no two contents may be equal once trimmed: uniqueItems compares whole items, and untrimmed',
  'near-duplicate-content': 'contents that differ only in case, spacing or Unicode form',
  'malformed-unicode': 'a lone surrogate, which JSON can carry as an escape and JSON Schema cannot exclude',
  'list-too-large': 'the bytes of the whole list as UTF-8 JSON',
  'parallel-in-progress': "the deployment's policy, which the worker holds and the document does not",
  'stale-version': 'If-Match names a version the session is no longer at: 412, its state',
  'subagent-exists': 'the name is taken: the session\'s state',
  'subagent-id-taken': 'another session holds that id',
  'queue-full': 'ten messages already wait: the session\'s state',
  'no-running-turn': 'no turn runs: the session\'s state',
  'no-pending-call': 'no tool call with that id waits: the session\'s state',
  'no-such-run': "the source's history has no such run",
  'no-such-event': "the source's history has no such event",
  'no-such-turn': "the source's history has no such turn",
  'no-withheld-tool': "no tool (or not that one) is withheld: the session's state",
} satisfies Partial<Record<RejectionRule, string>>;

/** The same for refusals that carry a code of their own rather than a rule. */
const UNSTATABLE_CODES = {
  'replay-failed': "the source's history does not replay on this code",
} satisfies Partial<Record<ErrorCode, string>>;

/**
 * The paths left out of the run, each with why. Nothing else is: the test checks that every other
 * operation of the document was run.
 */
const EXCLUDED: Record<string, string> = {};

/** Test cases per operation and phase: the run stays well under two minutes on two cores. */
const MAX_EXAMPLES = 30;

/**
 * Schemathesis' settings for this run. The sessions a request names in its path are the test's
 * own: the shared test server has sessions of other test files under fixed ids (the document's
 * example `build-42` among them), which this run must not touch.
 */
function settings(ids: { main: string; closing: string }): string {
  return `
# A request the document allows may be refused only under a rule JSON Schema cannot state: the
# hooks' check takes this back for every other refusal.
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "422", "429", "5xx"]

# Schemathesis' list of refusals, and three more: 412, a stale If-Match answered before the body
# is read (RFC 9110 §13.2.1 evaluates preconditions before the request content); 413, a body over
# the limit; 431, a URL too long for Node's HTTP server, which refuses it before the service can.
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "412", "413", "415", "422", "428", "429", "431", "5xx"]

[phases.stateful]
max-steps = 6

[generation]
max-examples = ${MAX_EXAMPLES}

[parameters]
"path.id" = "${ids.main}"

# Closing the main session would leave every later change a 409.
[[operations]]
include-path = "/sessions/{id}/close"
parameters = { "path.id" = "${ids.closing}" }

# MCP's Streamable HTTP transport takes a request only from a client that accepts both of its
# answers (a JSON body or an event stream), else 406; OpenAPI ignores an Accept parameter, so the
# document cannot state it. Every MCP client sends it.
[[operations]]
include-path = "/sessions/{id}/mcp"
headers = { Accept = "application/json, text/event-stream" }

# The event streams never end: one event is enough to check.
[[operations]]
include-path-regex = "^/sessions/\\\\{id\\\\}/(events|stream)$"
max-stream-events = 1
`;
}

/** The Schemathesis command, installed into the per-user cache the first time. */
async function schemathesis(): Promise<string> {
  const { stdout } = await promisify(execFile)(join(ROOT, 'scripts/ensure-schemathesis.sh'), { maxBuffer: 1024 * 1024 });
  return stdout.trim();
}

/** Runs `command args` in `cwd`, for at most five minutes; resolves with its exit code and everything it printed. */
function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 5 * 60_000 });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('the HTTP contract', () => {
  test('Schemathesis finds no answer of the service that its OpenAPI document does not describe', { timeout: 6 * 60_000 }, async (t) => {
    const command = await schemathesis();
    const main = uniqueId('contract');
    const closing = uniqueId('contract-closing');
    // Something to read: a list and a subagent.
    await bed.client.todoWrite(main, { todos: [todo('Read the contract'), todo('Keep it', 'in_progress')] });
    await bed.client.spawnSubagent(main, { name: 'helper', task: 'help' });
    await bed.client.start(closing);

    const folder = mkdtempSync(join(tmpdir(), 'agent-sessions-contract-'));
    t.after(() => rmSync(folder, { recursive: true, force: true }));
    writeFileSync(join(folder, 'schemathesis.toml'), settings({ main, closing }));
    const started = Date.now();
    // Run in a folder of its own: Schemathesis keeps its example database in the working folder.
    const { code, output } = await run(
      command,
      [
        '--config-file',
        join(folder, 'schemathesis.toml'),
        'run',
        `${bed.http.url}/openapi.json`,
        '--checks',
        'all',
        '--request-timeout',
        '20',
        ...Object.keys(EXCLUDED).flatMap((path) => ['--exclude-path', path]),
      ],
      folder,
      {
        ...process.env,
        NO_COLOR: '1',
        SCHEMATHESIS_HOOKS: join(ROOT, 'test/fixtures/schemathesis_hooks.py'),
        AGENT_SESSIONS_UNSTATABLE_RULES: JSON.stringify(Object.keys(UNSTATABLE_RULES)),
        AGENT_SESSIONS_UNSTATABLE_CODES: JSON.stringify(Object.keys(UNSTATABLE_CODES)),
      },
    );
    const took = Date.now() - started;
    assert.equal(code, 0, `Schemathesis found failures (exit ${code}, after ${took} ms):\n${output}`);
    const [, selected, total] = /Selected: (\d+)\/(\d+)/.exec(output) ?? [];
    assert.equal(Number(total) - Number(selected), Object.keys(EXCLUDED).length, `every operation but the excluded ones is run:\n${output}`);
    const generated = /(\d+) generated, .*/.exec(output);
    assert.ok(Number(generated?.[1]) > 0, `Schemathesis ran no test case:\n${output}`);
    t.diagnostic(`schemathesis: ${generated?.[0]} in ${took} ms`);
  });
});
