import { Option, type Command } from 'commander';
import type { SessionClient } from '../client';
import { matchesToolPattern } from '../config/agent-settings';
import { packageVersion } from '../config/package-version';
import { commandSettings } from './command-settings';
import { POLICY_ENV, POLICY_FLAG } from './policy-option';

type WithClient = (action: (client: SessionClient) => Promise<void>) => Promise<void>;

/** One tool as `agent-sessions tools` lists it. */
export interface ListedTool {
  name: string;
  /** `built-in`, `module:<path>` or `mcp:<server>`. */
  source: string;
  description: string;
  /** Whether a call waits for a person (`AGENT_SESSIONS_APPROVE_TOOLS`). */
  needsApproval: boolean;
  /** For `--session`: withheld by that session, and why. */
  withheld?: string;
}

/**
 * Adds `agent-sessions tools [--json] [--session ID]` (every tool a worker of these settings would
 * offer: where it comes from and whether it needs approval; with a session, what it withholds)
 * and `agent-sessions tools accept SESSION [NAME...]` (trust the changed definitions a session
 * withholds).
 */
export function addToolsCommand(program: Command, withClient: WithClient): void {
  const tools = program
    .command('tools')
    .description(
      "every tool a worker with these settings offers its model: built-in ones and each MCP server's (AGENT_SESSIONS_MCP_CONFIG, listed now), " +
        'whether a call waits for a person, and with --session which the session withholds because their definitions changed',
    )
    .option('--session <id>', 'also show which tools this session withholds, and why')
    .option('--json', 'print a JSON array of {name, source, description, needsApproval, withheld?} (and the servers that could not be listed)')
    .addOption(new Option(`${POLICY_FLAG} <true|false>`, `the policy that words todo_write's description (env ${POLICY_ENV}; default true)`))
    .action(async (options: { session?: string; json?: boolean; allowParallelInProgress?: string }) => {
      const settings = commandSettings(options.allowParallelInProgress !== undefined ? { allowParallelInProgress: options.allowParallelInProgress } : {});
      const [{ ToolRegistry, toolDefinition }, { McpPool }, { listMcpTools, parseMcpToolName }, { loadToolModule }] = await Promise.all([
        import('../../activities/tool-registry'),
        import('../../activities/mcp-pool'),
        import('../../activities/mcp-tools'),
        import('../worker/tool-module'),
      ]);
      const policy = settings.policy ?? { allowParallelInProgress: true };
      const agent = settings.agent;
      const user = agent.toolsModule !== undefined ? await loadToolModule(agent.toolsModule) : undefined;
      const registry = new ToolRegistry({
        policy,
        ...(agent.workspace !== undefined ? { workspace: agent.workspace } : {}),
        ...(user !== undefined ? { userTools: user.tools, userToolsSource: user.source } : {}),
      });
      const listed: ListedTool[] = registry.tools.map((tool) => ({
        name: tool.name,
        source: tool.source !== undefined ? `module:${tool.source}` : 'built-in',
        description: toolDefinition(tool).function.description,
        needsApproval: matchesToolPattern(tool.name, agent.approveTools),
      }));
      const servers = agent.mcpServers ?? [];
      let notes: string[] = [];
      if (servers.length > 0) {
        const pool = new McpPool(servers, (line) => process.stderr.write(`${line}\n`), packageVersion());
        try {
          const listing = await listMcpTools(pool);
          notes = listing.notes;
          for (const tool of listing.definitions) {
            listed.push({
              name: tool.function.name,
              source: `mcp:${parseMcpToolName(tool.function.name)?.server ?? ''}`,
              description: tool.function.description,
              needsApproval: matchesToolPattern(tool.function.name, agent.approveTools),
            });
          }
        } finally {
          await pool.close();
        }
      }
      const show = (rows: ListedTool[]) => {
        if (options.json === true) {
          process.stdout.write(`${JSON.stringify(notes.length > 0 ? { tools: rows, unavailable: notes } : rows)}\n`);
          return;
        }
        for (const row of rows) {
          const marks = [row.source, row.needsApproval ? 'needs approval' : 'runs unasked', ...(row.withheld !== undefined ? [`WITHHELD: ${row.withheld}`] : [])];
          process.stdout.write(`${row.name}  (${marks.join(', ')})\n`);
        }
        for (const note of notes) process.stderr.write(`${note}\n`);
      };
      if (options.session === undefined) return show(listed);
      const sessionId = options.session;
      await withClient(async (client) => {
        const withheld = (await client.session(sessionId)).agent.withheldTools ?? [];
        const byName = new Map(withheld.map((tool) => [tool.name, tool.reason]));
        const rows = listed.map((row) => (byName.has(row.name) ? { ...row, withheld: byName.get(row.name)! } : row));
        for (const tool of withheld) {
          if (!listed.some((row) => row.name === tool.name)) rows.push({ name: tool.name, source: `mcp:${parseMcpToolName(tool.name)?.server ?? ''}`, description: '', needsApproval: true, withheld: tool.reason });
        }
        show(rows);
      });
    });

  tools
    .command('accept')
    .description("trust the new definitions of tools a session withholds because they changed since it first offered them (all, or those named); they are offered from its next turn")
    .argument('<session-id>')
    .argument('[names...]', 'the withheld tools to accept (default: every one)')
    .action(async (sessionId: string, names: string[]) =>
      withClient(async (client) => {
        const result = await client.acceptTools(sessionId, names);
        process.stdout.write(`accepted in session ${sessionId}: ${result.accepted.join(', ')}\n`);
      }),
    );
}
