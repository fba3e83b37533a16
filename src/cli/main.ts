import { readFileSync, writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { AgentSessionsError, InvalidInputError, SessionClient, type ErrorCode, type ForkResult } from '../client';
import { AGENT_DEFAULTS, TEMPORAL_DEFAULTS, type Settings } from '../config';
import { renderCounts } from '../todo/counts';
import { renderTodoList } from '../todo/render-list';
import { clientOptions, commandSettings } from './command-settings';
import { POLICY_ENV, POLICY_FLAG, requirePolicy, UsageError } from './policy-option';
import { treeJson } from '../client/tree-json';
import { renderListing, renderTree } from './render-tree';
import { addClusterCommand } from './cluster-command';
import { addModelServerCommand } from './model-server-command';
import { addAgentCommands } from './agent-commands';
import { addReleaseCommand } from './release-command';
import { addMcpCommand } from './mcp-command';
import { addToolsCommand } from './tools-command';
import { startTracing } from '../tracing';

// Each command loads only what it needs: a short command (`todos`, `write`) must not pay for
// the worker, webpack, the HTTP service, the model client or the schema library.
const longRunning = () => import('./long-running');
const workerSide = async () => ({ ...(await import('../worker/replay')), ...(await import('../worker/runtime-logging')) });

/** Exit codes of the CLI. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2 });

const POLICY_HELP = `true or false: may several todos be in_progress at once (env ${POLICY_ENV})`;
const DEPLOYMENT_HELP = 'Worker Deployment the worker belongs to (env AGENT_SESSIONS_DEPLOYMENT; default: the task queue, agent-sessions)';
const BUILD_ID_HELP = 'build id of this worker (env AGENT_SESSIONS_BUILD_ID; default: a hash of its workflow and activity code)';
const TOOLS_HELP = "the agent's own tools: a JavaScript module whose default export lists them (env AGENT_SESSIONS_TOOLS; see docs/tools.md)";
const METRICS_PORT_HELP =
  "serve the worker's metrics (Temporal's temporal_* and the agent loop's) at http://HOST:PORT/metrics; 0: any free port (env AGENT_SESSIONS_METRICS_PORT)";

/** `--deployment` and `--build-id`, as typed. */
interface VersionFlags {
  deployment?: string;
  buildId?: string;
}

/** `--metrics-port` and `--metrics-host`, as typed. */
interface MetricsFlags {
  metricsPort?: string;
  metricsHost?: string;
}

/** Builds the `agent-sessions` command line. Exported for tests and embedding. */
export function buildProgram(): Command {
  const program = new Command('agent-sessions')
    .description('Durable AI-agent sessions on Temporal: validated todo_write updates, turns and a todos query.')
    .addHelpText(
      'after',
      `\nConnection (environment): TEMPORAL_ADDRESS (default ${TEMPORAL_DEFAULTS.address}), TEMPORAL_NAMESPACE ` +
        `(default ${TEMPORAL_DEFAULTS.namespace}), AGENT_SESSIONS_TASK_QUEUE (default ${TEMPORAL_DEFAULTS.taskQueue}),\n` +
        'TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY, TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME.\n' +
        "Agent loop (environment): OPENAI_BASE_URL (default OpenAI's endpoint), OPENAI_API_KEY, " +
        `AGENT_SESSIONS_MODEL (default ${AGENT_DEFAULTS.model}), AGENT_SESSIONS_MAX_STEPS (default ${AGENT_DEFAULTS.maxSteps}),\n` +
        `AGENT_SESSIONS_MAX_CONTEXT_CHARS (default ${AGENT_DEFAULTS.maxContextChars}), AGENT_SESSIONS_NUDGE (default ${AGENT_DEFAULTS.nudge}), ` +
        'AGENT_SESSIONS_APPROVE_TOOLS (tool names or patterns, comma-separated; default mcp__*, none for none), AGENT_SESSIONS_WORKSPACE (folder of the file tools),\n' +
          'AGENT_SESSIONS_MCP_CONFIG (a JSON file {"mcpServers": {...}}: MCP servers the agent takes tools from).',
    )
    .showHelpAfterError('(run with --help for usage)')
    // The command's span is named after it: `agent-sessions chat` is the root of the turn it begins.
    .hook('preAction', (_program, command) => void (commandName = `agent-sessions ${command.name()}`));

  program
    .command('dev')
    .description('run the local Temporal development server in the foreground until SIGINT/SIGTERM')
    .option('--port <port>', 'frontend (gRPC) port', parsePort, 7233)
    .option('--ui-port <port>', 'Web UI port (default: port + 1000)', parsePort)
    .option('--db <file>', 'SQLite file that keeps the server state (default: data/temporal.sqlite)')
    .action(async (options: { port: number; uiPort?: number; db?: string }) => (await longRunning()).runDevServer(commandSettings(), options));

  program
    .command('worker')
    .description('run a session worker until SIGINT/SIGTERM')
    .addOption(new Option(`${POLICY_FLAG} <true|false>`, POLICY_HELP))
    .option('--deployment <name>', DEPLOYMENT_HELP)
    .option('--build-id <id>', BUILD_ID_HELP)
    .option('--metrics-port <port>', `${METRICS_PORT_HELP}; default: no metrics endpoint`)
    .option('--metrics-host <host>', 'address the metrics endpoint binds (env AGENT_SESSIONS_METRICS_HOST; default 127.0.0.1; 0.0.0.0 exposes it)')
    .option('--tools <module>', TOOLS_HELP)
    .action(async (options: { allowParallelInProgress?: string; tools?: string } & VersionFlags & MetricsFlags) =>
      (await longRunning()).runWorker(commandSettings({ ...policyFlag(options), ...versionFlags(options), ...metricsFlags(options), ...toolsFlag(options) })),
    );

  program
    .command('up')
    .description('the main job: the local Temporal server (reused when one answers) plus a worker (what `npm start` runs)')
    .addOption(new Option(`${POLICY_FLAG} <true|false>`, POLICY_HELP))
    .option('--port <port>', 'frontend port of the local server', parsePort, 7233)
    .option('--ui-port <port>', 'Web UI port of the local server', parsePort)
    .option('--db <file>', 'SQLite file of the local server')
    .option('--http-port <port>', 'port of the HTTP API and dashboard', parsePort, 8080)
    .option('--deployment <name>', DEPLOYMENT_HELP)
    .option('--build-id <id>', `${BUILD_ID_HELP}; up makes it current (a release promote) when another build is`)
    .option('--metrics-port <port>', `${METRICS_PORT_HELP}; default: a free port, printed`)
    .option('--traces', 'also run a trace UI, Arize Phoenix (installed from PyPI once), on loopback and send the traces of the worker and the HTTP service to it')
    .option('--tools <module>', TOOLS_HELP)
    .action(async (options: { allowParallelInProgress?: string; port: number; uiPort?: number; db?: string; httpPort: number; traces?: boolean; tools?: string } & VersionFlags & MetricsFlags) => {
      const flags = { ...policyFlag(options), ...versionFlags(options), ...metricsFlags(options), ...toolsFlag(options), httpPort: options.httpPort };
      const settings = commandSettings(flags);
      // With --traces, the settings once more, pointed at the Phoenix `up` started.
      const tracedTo = options.traces === true ? (tracesEndpoint: string) => commandSettings({ ...flags, tracesEndpoint }) : undefined;
      return (await longRunning()).runUp(settings, options, tracedTo);
    });

  program
    .command('serve')
    .description('run the HTTP API and the live dashboard until SIGINT/SIGTERM')
    .option('--port <port>', 'port to listen on', parsePort, 8080)
    .option('--host <host>', 'address to bind (default 127.0.0.1; 0.0.0.0 exposes it)', '127.0.0.1')
    .addOption(new Option(`${POLICY_FLAG} <true|false>`, `${POLICY_HELP}; only for GET /tool-definition`))
    .action(async (options: { port: number; host: string; allowParallelInProgress?: string }) =>
      (await longRunning()).runServe(commandSettings({ ...policyFlag(options), httpHost: options.host, httpPort: options.port })),
    );

  program
    .command('start')
    .description('start a session; starting a running one succeeds and changes nothing')
    .argument('<session-id>')
    .action(async (sessionId: string) =>
      withClient(async (client) => {
        const result = await client.start(sessionId);
        print(result.created ? `started session ${sessionId}` : `session ${sessionId} is already running`);
      }),
    );

  program
    .command('turn-start')
    .description('start a new turn: the list is cleared until the next write')
    .argument('<session-id>')
    .action(async (sessionId: string) =>
      withClient(async (client) => {
        await client.turnStart(sessionId);
        print(`turn started in session ${sessionId}`);
      }),
    );

  program
    .command('turn-end')
    .description('end the current turn: the list stays visible')
    .argument('<session-id>')
    .action(async (sessionId: string) =>
      withClient(async (client) => {
        await client.turnEnd(sessionId);
        print(`turn ended in session ${sessionId}`);
      }),
    );

  program
    .command('write')
    .description('todo_write: replace the list with {"todos":[...]} given with --json or on stdin')
    .argument('<session-id>')
    .option('--json <args>', 'the tool-argument object {"todos":[{"content":"…","status":"pending"}]}')
    .option('--update-id <id>', 'idempotency key: a write retried with the same id is applied once')
    .option('--expected-version <n>', 'refuse the write unless the session is still at this version', parseVersion)
    .action(async (sessionId: string, options: { json?: string; updateId?: string; expectedVersion?: number }) => {
      const args = parseJsonArgument(options.json ?? (await readStdin()), options.json !== undefined ? '--json' : 'stdin');
      await withClient(async (client) => {
        const result = await client.todoWrite(sessionId, args, {
          ...(options.updateId !== undefined ? { updateId: options.updateId } : {}),
          ...(options.expectedVersion !== undefined ? { expectedVersion: options.expectedVersion } : {}),
        });
        print(renderCounts(result));
      });
    });

  program
    .command('spawn')
    .description('start a subagent of a session as a child session; prints the child session id')
    .argument('<session-id>', 'the parent session')
    .argument('<name>', 'the subagent name, unique within the parent')
    .option('--task <text>', 'what the subagent is asked to do')
    .action(async (sessionId: string, name: string, options: { task?: string }) =>
      withClient(async (client) => {
        const child = await client.spawnSubagent(sessionId, { name, ...(options.task !== undefined ? { task: options.task } : {}) });
        print(child.sessionId);
      }),
    );

  program
    .command('tree')
    .description('a session, its list and counts, and its subagents recursively (each summarized from its search attributes; --full reads their lists)')
    .argument('<session-id>')
    .option('--full', "read every subagent's whole list too (one query per open subagent)")
    .option('--limit <n>', "one page of at most n of the session's direct subagents (the next page's token: nextPageToken in the JSON, else on stderr)", parseLimit)
    .option('--page-token <token>', 'the page after the one that gave this nextPageToken')
    .option('--json', 'print {"id","todos","counts","children":[...],...} as JSON')
    .action(async (sessionId: string, options: { full?: boolean; limit?: number; pageToken?: string; json?: boolean }) =>
      withClient(async (client) => {
        const tree = await client.tree(sessionId, {
          full: options.full === true,
          ...(options.limit !== undefined ? { limit: options.limit } : {}),
          ...(options.pageToken !== undefined ? { pageToken: options.pageToken } : {}),
        });
        print(options.json === true ? JSON.stringify(treeJson(tree)) : renderTree(tree));
        if (options.json !== true && tree.nextPageToken) {
          const flags = [...(options.full === true ? ['--full'] : []), ...(options.limit !== undefined ? ['--limit', String(options.limit)] : [])];
          process.stderr.write(`more: agent-sessions tree ${sessionId} ${[...flags, '--page-token', tree.nextPageToken].join(' ')}\n`);
        }
      }),
    );

  program
    .command('list')
    .description('sessions known to Temporal, newest first: status, parent, counts, last update')
    .option('--open', 'only sessions that are still running')
    .option('--parent <session-id>', 'only the subagents of this session')
    .option('--in-progress', 'only sessions with a todo in progress')
    .option('--limit <n>', 'one page of at most n sessions (the JSON then carries nextPageToken)', parseLimit)
    .option('--page-token <token>', 'the page after the one that gave this nextPageToken')
    .option('--json', 'print a JSON array (with --limit: {"sessions": [...], "nextPageToken": ...})')
    .action(async (options: { open?: boolean; parent?: string; inProgress?: boolean; limit?: number; pageToken?: string; json?: boolean }) =>
      withClient(async (client) => {
        const filters = {
          open: options.open === true,
          inProgress: options.inProgress === true,
          ...(options.parent !== undefined ? { parent: options.parent } : {}),
          ...(options.pageToken !== undefined ? { pageToken: options.pageToken } : {}),
        };
        if (options.limit === undefined && options.pageToken === undefined) {
          const sessions = await client.list(filters);
          print(options.json === true ? JSON.stringify(sessions) : renderListing(sessions));
          return;
        }
        const page = await client.listPage({ ...filters, limit: options.limit ?? 100 });
        if (options.json === true) return print(JSON.stringify(page));
        print(renderListing(page.sessions));
        if (page.nextPageToken !== null) process.stderr.write(`more: agent-sessions list --limit ${options.limit ?? 100} --page-token ${page.nextPageToken}\n`);
      }),
    );

  program
    .command('todos')
    .description('the current list')
    .argument('<session-id>')
    .option('--json', 'print the JSON array, or null when the current turn has no list')
    .action(async (sessionId: string, options: { json?: boolean }) =>
      withClient(async (client) => {
        const todos = await client.todos(sessionId);
        print(options.json === true ? JSON.stringify(todos) : renderTodoList(todos));
      }),
    );

  program
    .command('session')
    .description('turn, list, counts and version of a session')
    .argument('<session-id>')
    .option('--json', 'print the session state as JSON')
    .action(async (sessionId: string, options: { json?: boolean }) =>
      withClient(async (client) => {
        const s = await client.session(sessionId);
        if (options.json === true) return print(JSON.stringify(s));
        const forked = s.forkedFrom ? `\nforked from ${s.forkedFrom.id} at event ${s.forkedFrom.eventId} of run ${s.forkedFrom.runId}` : '';
        const withheld = (s.agent.withheldTools ?? []).map((tool) => `\nwithheld tool ${tool.name}: ${tool.reason} (agent-sessions tools accept ${s.sessionId} ${tool.name})`).join('');
        print(
          `session ${s.sessionId}: ${s.closed ? 'closed' : 'open'}, turn ${s.turn} ${s.turnOpen ? '(in progress)' : '(ended)'}, ` +
            `version ${s.version}${forked}${withheld}\n${renderTodoList(s.todos, '  ')}`,
        );
      }),
    );

  program
    .command('fork')
    .description(
      "start NEW as a copy of SOURCE's state at one event of its history (the newest by default): the list, the turn count, " +
        'the transcript and the usage; SOURCE is not touched. A turn running at that event is ended in NEW; subagents are not copied',
    )
    .argument('<source>', 'the session to fork (running or closed)')
    .argument('<new>', 'the id of the new session (not taken)')
    .option('--at <event-id>', 'the history event to fork at, as `temporal workflow show` numbers the run', (value) => parsePositive(value, '--at', 'a history event id'))
    .option('--run <run-id>', 'with --at: the run of the continue-as-new chain the event id is in (default: the current run)')
    .option('--before-turn <n>', 'fork at the state just before turn n began (the event before its turn/start)', (value) => parsePositive(value, '--before-turn', 'a turn number'))
    .action(async (source: string, newId: string, options: { at?: number; run?: string; beforeTurn?: number }) => {
      if (options.at !== undefined && options.beforeTurn !== undefined) throw new UsageError('fork takes --at EVENT_ID or --before-turn N, not both');
      if (options.run !== undefined && options.at === undefined) throw new UsageError('--run RUN_ID names the run of an --at EVENT_ID; give --at too');
      const at =
        options.at !== undefined
          ? { eventId: options.at, ...(options.run !== undefined ? { runId: options.run } : {}) }
          : options.beforeTurn !== undefined
            ? { beforeTurn: options.beforeTurn }
            : {};
      await withClient(async (client) => {
        const forked = await client.fork(source, newId, at);
        print(renderFork(forked));
      });
    });

  program
    .command('close')
    .description('close a session: its workflow completes, its list and history stay readable')
    .argument('<session-id>')
    .action(async (sessionId: string) =>
      withClient(async (client) => {
        await client.close(sessionId);
        print(`closed session ${sessionId}`);
      }),
    );

  program
    .command('history')
    .description('the session history as JSON, in the format of `temporal workflow show --output json`')
    .argument('<session-id>')
    .option('--out <file>', 'write it to a file instead of stdout')
    .action(async (sessionId: string, options: { out?: string }) =>
      withClient(async (client) => {
        const json = `${JSON.stringify(await client.exportHistory(sessionId), null, 2)}\n`;
        if (options.out === undefined) process.stdout.write(json);
        else {
          writeFileSync(options.out, json);
          process.stderr.write(`wrote the history of ${sessionId} to ${options.out}\n`);
        }
      }),
    );

  program
    .command('replay')
    .description('replay a session history against the current workflow code; print the final list as JSON')
    .argument('[session-id]', 'fetch the history of this session')
    .option('--file <file>', 'replay a history file instead (as written by `history` or `temporal workflow show -o json`)')
    .addOption(new Option(`${POLICY_FLAG} <true|false>`, POLICY_HELP))
    .action(async (sessionId: string | undefined, options: { file?: string; allowParallelInProgress?: string }) => {
      const settings = commandSettings(policyFlag(options));
      const policy = requirePolicy(settings.policy);
      if ((sessionId === undefined) === (options.file === undefined)) {
        throw new UsageError('replay takes either a <session-id> or --file FILE (exactly one)');
      }
      const { installRuntimeLogging, replaySessionHistory } = await workerSide();
      installRuntimeLogging();
      const bundle = { cacheDir: settings.paths.cacheDir };
      if (options.file !== undefined) {
        const text = readFileOrFail(options.file);
        const report = await replaySessionHistory(text, policy, undefined, bundle);
        print(JSON.stringify(report.final.todos));
        return;
      }
      await withClient(async (client) => {
        const report = await replaySessionHistory(await client.exportHistory(sessionId as string), policy, sessionId, bundle);
        print(JSON.stringify(report.final.todos));
      }, settings);
    });

  program
    .command('tool-definition')
    .description('print the todo_write function definition (OpenAI-compatible) a model is given under a policy')
    .addOption(new Option(`${POLICY_FLAG} <true|false>`, POLICY_HELP))
    .action(async (options: { allowParallelInProgress?: string }) => {
      const { todoWriteToolDefinition } = await import('../todo/description');
      print(JSON.stringify(todoWriteToolDefinition(requirePolicy(commandSettings(policyFlag(options)).policy)), null, 2));
    });

  addClusterCommand(program);
  addReleaseCommand(program);
  addMcpCommand(program);
  addModelServerCommand(program);
  addAgentCommands(program, withClient, () => commandSettings());
  addToolsCommand(program, withClient);
  return program;
}

/**
 * Exit code of each kind of failure: 2 for a missing or malformed setting, 1 for everything else
 * that failed (a rejected write, an unknown or closed or broken session, an unreachable server).
 */
const EXIT_BY_CODE: Readonly<Record<ErrorCode, number>> = Object.freeze({
  rejected: EXIT.failed,
  'session-not-found': EXIT.failed,
  'session-closed': EXIT.failed,
  'session-exists': EXIT.failed,
  'invalid-session-id': EXIT.failed,
  'session-broken': EXIT.failed,
  'no-worker': EXIT.failed,
  'session-timeout': EXIT.failed,
  'temporal-unavailable': EXIT.failed,
  'outcome-unknown': EXIT.failed,
  'replay-failed': EXIT.failed,
  'invalid-setting': EXIT.usage,
  'invalid-input': EXIT.failed,
  'release-refused': EXIT.failed,
});

/**
 * Runs the CLI and exits: 0 on success, 1 when a command fails (a rejected write, an unknown
 * session, an unreachable server), 2 for a missing or malformed setting. Errors are printed as
 * one sentence, never a stack trace.
 */
export async function main(argv: readonly string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync([...argv]);
  } catch (error) {
    process.stderr.write(`agent-sessions: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = error instanceof AgentSessionsError ? EXIT_BY_CODE[error.code] : EXIT.failed;
  }
}

/** `agent-sessions <command>`, as the running command's span is named. */
let commandName = 'agent-sessions';

/**
 * Runs `action` with a client of the command's settings (loaded here unless the command already
 * did). With an OTLP endpoint set, the command is one span (`agent-sessions chat`), the root of
 * what it starts, and its spans are sent before it returns.
 */
async function withClient(action: (client: SessionClient) => Promise<void>, settings: Settings = commandSettings()): Promise<void> {
  const tracing = settings.tracing !== undefined ? await startTracing(settings.tracing, { serviceName: 'agent-sessions-cli' }) : undefined;
  try {
    const client = await SessionClient.connect({ ...clientOptions(settings), ...(tracing !== undefined ? { plugins: [tracing.clientPlugin] } : {}) });
    try {
      await (tracing !== undefined ? tracing.inSpan(commandName, {}, () => action(client)) : action(client));
    } finally {
      await client.closeConnection();
    }
  } finally {
    await tracing?.shutdown();
  }
}

/** The version flags as the settings loader takes them: only those given. */
function versionFlags(options: VersionFlags): VersionFlags {
  return { ...(options.deployment !== undefined ? { deployment: options.deployment } : {}), ...(options.buildId !== undefined ? { buildId: options.buildId } : {}) };
}

/** The metrics flags as the settings loader takes them: only those given. */
function metricsFlags(options: MetricsFlags): MetricsFlags {
  return { ...(options.metricsPort !== undefined ? { metricsPort: options.metricsPort } : {}), ...(options.metricsHost !== undefined ? { metricsHost: options.metricsHost } : {}) };
}

/** `--tools` as the settings loader takes it: only when it was given. */
function toolsFlag(options: { tools?: string }): { tools?: string } {
  return options.tools !== undefined ? { tools: options.tools } : {};
}

/** The policy flag as the settings loader takes it: only when it was given. */
function policyFlag(options: { allowParallelInProgress?: string }): { allowParallelInProgress?: string } {
  return options.allowParallelInProgress !== undefined ? { allowParallelInProgress: options.allowParallelInProgress } : {};
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

function parseVersion(value: string): number {
  const version = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(version)) throw new UsageError(`--expected-version must be a non-negative integer, got ${JSON.stringify(value)}`);
  return version;
}

function parsePositive(value: string, flag: string, what: string): number {
  const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  if (!(Number.isInteger(n) && n >= 1)) throw new UsageError(`${flag} must be a positive integer (${what}), got ${JSON.stringify(value)}`);
  return n;
}

/** What `fork` prints: where the new session came from and what it starts with. */
function renderFork(forked: ForkResult): string {
  const { forkedFrom: from, session: s } = forked;
  const list = s.todos === null ? 'no list' : `${s.todos.length} todo${s.todos.length === 1 ? '' : 's'} (${s.counts.pending} pending, ${s.counts.in_progress} in progress, ${s.counts.completed} completed)`;
  const lines = [`forked session ${forked.sessionId} from ${from.id} at event ${from.eventId} of run ${from.runId}: turn ${s.turn}, ${list}, version ${s.version}`];
  if (forked.forkedChildren.length > 0) {
    lines.push(`subagents open at that event, not copied: ${forked.forkedChildren.map((child) => child.sessionId).join(', ')}`);
  }
  return lines.join('\n');
}

function parseLimit(value: string): number {
  const limit = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= 1000)) throw new UsageError(`--limit must be an integer from 1 to 1000, got ${JSON.stringify(value)}`);
  return limit;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`not a port number: ${JSON.stringify(value)}`);
  return port;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) {
    throw new UsageError('give the tool arguments {"todos":[...]} with --json or on standard input');
  }
  // Read as a stream: a pipe whose writer is slow is not an error, just a wait.
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new InvalidInputError('the arguments from stdin are not valid JSON: they are not UTF-8 text');
  }
}

function readFileOrFail(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
}

function parseJsonArgument(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`the arguments from ${source} are not valid JSON (${(error as Error).message}); expected {"todos":[...]}`);
  }
}

