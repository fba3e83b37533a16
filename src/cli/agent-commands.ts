import type { Command } from 'commander';
import type { SessionClient } from '../client';
import { followTurn } from './follow-turn';
import { renderOutcome, renderTranscript, renderUsageTable } from './render-agent';

/** Runs an action with a connected client and closes it after (the CLI's own `withClient`). */
export type WithClient = (action: (client: SessionClient) => Promise<void>) => Promise<void>;

/** Exit code of `chat` when Ctrl-C stopped following: 128 + SIGINT, as shells report it. */
export const EXIT_STOPPED_FOLLOWING = 130;

/**
 * Adds the agent loop's commands: `chat` (send a message and follow its turn to the answer),
 * `transcript`, `interrupt`, `approve`, `deny` and `usage`. `withClient` is the CLI's way of
 * connecting, so these commands read their settings exactly as every other command does.
 */
export function addAgentCommands(program: Command, withClient: WithClient): void {
  program
    .command('chat')
    .description(
      "send a message to a session's agent and follow its turn: tool calls, list changes and approvals to stderr as they " +
        'happen, the final answer on stdout (exit 0; exit 1 with the reason when the turn did not complete). ' +
        'Ctrl-C stops following, not the turn (use interrupt for that)',
    )
    .argument('<session-id>')
    .argument('<text>', 'the message')
    .action(async (sessionId: string, text: string) => withClient(async (client) => chat(client, sessionId, text)));

  program
    .command('transcript')
    .description("the conversation of a session's agent: messages, tool calls and their results, the last turn and the usage")
    .argument('<session-id>')
    .option('--json', 'print {"sessionId","messages","compacted","usage","lastTurn"} as JSON')
    .action(async (sessionId: string, options: { json?: boolean }) =>
      withClient(async (client) => {
        const transcript = await client.transcript(sessionId);
        print(options.json === true ? JSON.stringify(transcript) : renderTranscript(transcript));
      }),
    );

  program
    .command('interrupt')
    .description('stop the running turn: its model call is cancelled, the turn ends as interrupted, the list stays')
    .argument('<session-id>')
    .action(async (sessionId: string) =>
      withClient(async (client) => {
        const outcome = await client.interrupt(sessionId);
        print(outcome === null ? `session ${sessionId}: no turn had ended yet` : `session ${sessionId}: ${renderOutcome(outcome)}`);
      }),
    );

  for (const decision of ['approve', 'deny'] as const) {
    program
      .command(decision)
      .description(decision === 'approve' ? 'let a tool call that waits for a person run' : 'refuse a tool call that waits for a person; the model reads the refusal (and the reason)')
      .argument('<session-id>')
      .argument('<call-id>', 'the id of the waiting call, as chat and the session show it')
      .option('--reason <text>', 'why, for the model and for people reading the history')
      .action(async (sessionId: string, callId: string, options: { reason?: string }) =>
        withClient(async (client) => {
          const result = await client[decision](sessionId, callId, options.reason);
          print(`${result.decision} call ${result.callId} in session ${sessionId}`);
        }),
      );
  }

  program
    .command('usage')
    .description('what the model calls of a session cost, alone and summed over every subagent below it')
    .argument('<session-id>')
    .option('--json', 'print {"session":{…},"tree":{…}} with prompt_tokens, completion_tokens, total_tokens, model_calls, output_chars, todo_write_chars')
    .action(async (sessionId: string, options: { json?: boolean }) =>
      withClient(async (client) => {
        const usage = await client.usage(sessionId);
        print(options.json === true ? JSON.stringify({ session: usage.session, tree: usage.tree }) : renderUsageTable(sessionId, usage));
      }),
    );
}

/**
 * `chat`: sends the message, follows its turn (what happens goes to stderr), prints the answer
 * on stdout. Sets the exit code: 0 for a completed turn, 1 for one that ended otherwise or never
 * ran, {@link EXIT_STOPPED_FOLLOWING} after Ctrl-C.
 */
async function chat(client: SessionClient, sessionId: string, text: string): Promise<void> {
  const sent = await client.sendMessage(sessionId, text);
  const stop = new AbortController();
  const onInterrupt = (): void => stop.abort();
  process.once('SIGINT', onInterrupt);
  try {
    const followed = await followTurn(client, sessionId, sent, text, info, { signal: stop.signal });
    if (!followed.ended) {
      if (followed.why === 'stopped') {
        info(
          `stopped following session ${sessionId}; its turn goes on without you ` +
            `(agent-sessions transcript ${sessionId} shows it, agent-sessions interrupt ${sessionId} stops it)`,
        );
        process.exitCode = EXIT_STOPPED_FOLLOWING;
      } else {
        info(`session ${sessionId} was closed before message ${sent.messageId} got its turn; nothing answered it`);
        process.exitCode = 1;
      }
      return;
    }
    const { outcome } = followed;
    if (outcome.reason === 'completed') {
      print(outcome.answer ?? '');
      return;
    }
    info(renderOutcome(outcome));
    process.exitCode = 1;
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

function info(line: string): void {
  process.stderr.write(`${line}\n`);
}
