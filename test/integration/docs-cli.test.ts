/**
 * The commands the docs show are the commands that work: every line of every ```sh block of
 * README.md (its tour) and docs/cli.md is run, in order, by bash, against the test server and a
 * worker as `npm start` runs it (policy `true`, the scripted demo model of `agent-sessions up`).
 *
 * The convention, also stated at the top of docs/cli.md:
 *   - a command must exit 0, unless its block opens with ```sh exit=N;
 *   - a `# ` line right after a command is output it must print, on stdout or stderr (`…` stands
 *     for any text on that line); an explanation goes at the end of the command's line instead;
 *   - `npx agent-sessions` and `agent-sessions` run `bin/agent-sessions.js` of this checkout,
 *     `temporal` the Temporal CLI the tests use; commands that do not end (`npm start`, `dev`,
 *     `up`, `worker`, `serve`, `cluster`, `model-server`, `mcp`) belong in ```text blocks and fail here.
 *
 * Needs `npm run build` first, as `npm test` does: the CLI runs `dist/` (without it, bin/ falls
 * back to the sources through tsx, where the commands that load a module on demand, such as
 * `replay`, `tool-definition` and `release`, cannot find it).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { demoScript } from '../../src/cli/up-demo';
import { findTemporalCli } from '../../src/devserver';
import { ROOT, temporalAddress, useTestBed } from '../helpers';
import { fencedBlocks } from '../markdown';

/** The files whose sh blocks run, in this order, against one server and worker. */
const FILES = ['README.md', 'docs/cli.md'];

/** Commands that run until stopped: shown in the docs, never run by a test. */
const LONG_RUNNING = /^(?:npm\b|(?:npx\s+)?agent-sessions\s+(?:dev|up|worker|serve|cluster|model-server|mcp)\b)/;

/** One command of a docs file, with what it must do. */
interface DocCommand {
  file: string;
  line: number;
  command: string;
  exit: number;
  output: string[];
}

/** The commands of `file`'s sh blocks, in order; throws on a block this test cannot read. */
function docCommands(file: string): DocCommand[] {
  const commands: DocCommand[] = [];
  for (const block of fencedBlocks(readFileSync(join(ROOT, file), 'utf8'))) {
    const [language, ...attributes] = block.info.split(/\s+/);
    if (language !== 'sh') continue;
    let exit = 0;
    for (const attribute of attributes) {
      const value = /^exit=(\d+)$/.exec(attribute)?.[1];
      if (value === undefined) throw new Error(`${file}:${block.line}: unknown attribute "${attribute}" of a sh block (known: exit=N)`);
      exit = Number(value);
    }
    let continued: DocCommand | undefined;
    block.lines.forEach((text, index) => {
      const line = block.line + 1 + index;
      if (continued !== undefined) {
        continued.command += `\n${text}`;
        if (!text.endsWith('\\')) continued = undefined;
        return;
      }
      if (text.trim() === '') return;
      if (text.startsWith('#')) {
        const last = commands.at(-1);
        if (last === undefined || last.line < block.line) throw new Error(`${file}:${line}: a "# " output line with no command before it in its block`);
        last.output.push(text.replace(/^#\s?/, ''));
        return;
      }
      const command: DocCommand = { file, line, command: text, exit, output: [] };
      commands.push(command);
      if (text.endsWith('\\')) continued = command;
    });
  }
  return commands;
}

/** A pattern for one shown output line: the text itself, `…` standing for any text on the line. */
function outputPattern(shown: string): RegExp {
  return new RegExp(shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\n]*'));
}

/** What a command printed and how it ended. */
interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runShell(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const policy = { allowParallelInProgress: true };
const bed = useTestBed('docs-cli', policy, {
  // The very model `npm start` gives the worker when no real one is configured.
  model: { script: demoScript(policy).script },
  worker: { agent: { apiKey: () => 'scripted' } },
});
const scratch = mkdtempSync(join(tmpdir(), 'agent-sessions-docs-cli-'));
let env: NodeJS.ProcessEnv = {};

before(async () => {
  const bin = join(scratch, 'bin');
  const node = JSON.stringify(process.execPath);
  const cli = JSON.stringify(join(ROOT, 'bin', 'agent-sessions.js'));
  const shims = {
    'agent-sessions': `exec ${node} ${cli} "$@"`,
    npx: `if [ "$1" = agent-sessions ]; then shift; exec ${node} ${cli} "$@"; fi\necho "the docs test runs npx agent-sessions only, not npx $1" >&2\nexit 127`,
    temporal: `exec ${JSON.stringify(await findTemporalCli())} "$@"`,
  };
  mkdirSync(bin);
  for (const [name, body] of Object.entries(shims)) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  await bed.ready;
  env = {
    ...process.env,
    PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
    TEMPORAL_ADDRESS: await temporalAddress(),
    AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue,
  };
});

after(() => rmSync(scratch, { recursive: true, force: true }));

for (const file of FILES) {
  describe(`the sh blocks of ${file}, in order`, () => {
    for (const doc of docCommands(file)) {
      const shown = doc.command.length > 90 ? `${doc.command.slice(0, 87)}…` : doc.command;
      test(`${file}:${doc.line} ${shown} exits ${doc.exit}${doc.output.length > 0 ? ' and prints what the docs show' : ''}`, { timeout: 120_000 }, async () => {
        assert.doesNotMatch(doc.command, LONG_RUNNING, `${file}:${doc.line} runs until stopped: show it in a text block, not a sh block`);
        const ran = await runShell(doc.command, scratch, env);
        const printed = `${ran.stdout}${ran.stderr}`;
        assert.equal(ran.code, doc.exit, `${file}:${doc.line} exited ${ran.code}; it printed:\n${printed}`);
        for (const line of doc.output) {
          assert.match(printed, outputPattern(line), `${file}:${doc.line} shows "${line}", which the command did not print; it printed:\n${printed}`);
        }
      });
    }
  });
}
