import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename } from 'node:path';
import { Option, type Command } from 'commander';
import { SessionClient } from '../client';
import { packageVersion } from '../config/package-version';
import { topLevelIdProblem } from '../session';
import { clientOptions, commandSettings } from './command-settings';
import { POLICY_ENV, POLICY_FLAG, requirePolicy, UsageError } from './policy-option';

/**
 * The session `agent-sessions mcp` serves when `--session` is left out: the working folder's
 * name and a short hash of its whole path (`my-app-3f9c2a`), so one project keeps one plan
 * across restarts of its agent, and two folders of the same name do not share one.
 */
export function defaultMcpSessionId(folder: string): string {
  let path = folder;
  try {
    path = realpathSync(folder);
  } catch {
    // A folder that cannot be resolved still names a session by the path given.
  }
  const name = basename(path).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '').slice(0, 48) || 'session';
  return `${name}-${createHash('sha256').update(path).digest('hex').slice(0, 6)}`;
}

/**
 * Adds `agent-sessions mcp [--session ID] --allow-parallel-in-progress true|false`: one session
 * served over MCP on stdin/stdout until the client closes stdin (what Claude Code, Codex,
 * Gemini CLI, Cursor and OpenCode start as a stdio server). Nothing but the protocol goes to
 * stdout; what the server has to say goes to stderr.
 */
export function addMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description("serve a session's todo list over MCP on stdio (todo_write, todo_read, the list as a resource) until stdin closes")
    .option('--session <id>', 'the session to serve; created by its first write (default: the working folder\'s name and a hash of its path, printed to stderr)')
    .addOption(new Option(`${POLICY_FLAG} <true|false>`, `the deployment's parallel policy, which words todo_write's description (env ${POLICY_ENV})`))
    .action(async (options: { session?: string; allowParallelInProgress?: string }) => {
      const settings = commandSettings(options.allowParallelInProgress !== undefined ? { allowParallelInProgress: options.allowParallelInProgress } : {});
      const policy = requirePolicy(settings.policy);
      const sessionId = options.session ?? defaultMcpSessionId(process.cwd());
      if (sessionId.trim() === '') throw new UsageError('--session needs a session id');
      const problem = topLevelIdProblem(sessionId);
      if (problem !== undefined) throw new UsageError(`--session ${JSON.stringify(sessionId)} cannot name a session: ${problem}`);
      if (options.session === undefined) process.stderr.write(`agent-sessions mcp: serving session ${sessionId} (from the working folder; --session ID chooses another)\n`);

      const [{ serveSessionOverStdio }, { SessionReader }] = await Promise.all([import('../mcp/stdio-server'), import('../http/session-reader')]);
      // Connected lazily by the client: the MCP handshake must not wait for Temporal, and a
      // server that is down is said in the tool's answer, not by a process that will not start.
      const client = SessionClient.lazy(clientOptions(settings));
      const reader = new SessionReader(client, MCP_POLL_MS);
      try {
        await serveSessionOverStdio({
          client,
          sessionId,
          policy,
          version: packageVersion(),
          watch: (listener, onError) => reader.watch(sessionId, listener, onError),
          log: (line) => process.stderr.write(`${line}\n`),
        });
      } finally {
        reader.close();
        await client.closeConnection();
      }
    });
}

/** How often a stdio server with a subscriber reads its session: one query a second. */
const MCP_POLL_MS = 1000;
