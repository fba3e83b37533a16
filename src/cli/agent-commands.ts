import type { Command } from 'commander';
import type { SessionClient } from '../client';
import { readStream, streamEnd, type StreamTarget } from '../client/session-stream';
import type { Settings } from '../config';
import { assertSameStreamStore, openStreamStore, type StreamStore } from '../streams';
import type { UserMessageResult } from '../../workflows/messages';
import { followTurn } from './follow-turn';
import { renderOutcome, renderTranscript, renderUsageTable } from './render-agent';
import { StreamPrinter } from './stream-printer';

/** Runs an action with a connected client and closes it after (the CLI's own `withClient`). */
export type WithClient = (action: (client: SessionClient) => Promise<void>) => Promise<void>;

/** Exit code of `chat` when Ctrl-C stopped following: 128 + SIGINT, as shells report it. */
export const EXIT_STOPPED_FOLLOWING = 130;

/** How long `chat` waits, once the turn has ended, for the stream to bring the last words it has not yet shown. */
const LAST_WORDS_MS = 3000;

/**
 * Adds the agent loop's commands: `chat` (send a message and follow its turn to the answer),
 * `transcript`, `interrupt`, `approve`, `deny` and `usage`. `withClient` is the CLI's way of
 * connecting, so these commands read their settings exactly as every other command does.
 */
export function addAgentCommands(program: Command, withClient: WithClient, settings: () => Settings): void {
  program
    .command('chat')
    .description(
      "send a message to a session's agent and follow its turn: tool calls, list changes and approvals to stderr as they " +
        "happen, the model's words on stdout as they are written (--stream, the default on a terminal) or the final answer " +
        'once the turn ends (--no-stream, the default otherwise) (exit 0; exit 1 with the reason when the turn did not complete). ' +
        'Ctrl-C stops following, not the turn (use interrupt for that)',
    )
    .argument('<session-id>')
    .argument('<text>', 'the message')
    .option('--stream', "print the model's words as they are written, and each tool call's name as soon as it is known (the default when stdout is a terminal)")
    .option('--no-stream', 'print only the final answer on stdout, once the turn has ended (the default when stdout is not a terminal)')
    .action(async (sessionId: string, text: string, options: { stream?: boolean }) =>
      withClient(async (client) => chat(client, sessionId, text, options.stream ?? process.stdout.isTTY === true ? settings() : undefined)),
    );

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
 * on stdout. With `streamed`, the model's words go to stdout as they are written (read from the
 * session's stream), each call's on its own line, and the answer is not printed again. Sets the
 * exit code: 0 for a completed turn, 1 for one that ended otherwise or never ran,
 * {@link EXIT_STOPPED_FOLLOWING} after Ctrl-C.
 */
async function chat(client: SessionClient, sessionId: string, text: string, streamed: Settings | undefined): Promise<void> {
  const words = streamed !== undefined ? await openWords(client, sessionId, streamed) : undefined;
  const printer = words !== undefined ? new StreamPrinter({ out: (chunk) => process.stdout.write(chunk), err: info }) : undefined;
  const say = printer !== undefined ? (line: string) => printer.line(line) : info;
  const stop = new AbortController();
  const onInterrupt = (): void => stop.abort();
  process.once('SIGINT', onInterrupt);
  let sent: UserMessageResult;
  try {
    sent = await client.sendMessage(sessionId, text);
  } catch (error) {
    words?.stop();
    process.off('SIGINT', onInterrupt);
    throw error;
  }
  // A message queued behind another turn: the words before its own turn are that turn's.
  if (words !== undefined && printer !== undefined && !sent.queued) words.print(printer);
  try {
    const followed = await followTurn(client, sessionId, sent, text, say, {
      signal: stop.signal,
      streamed: printer !== undefined,
      onStarted: () => {
        if (words !== undefined && printer !== undefined && sent.queued) words.print(printer, 'from-now');
      },
    });
    if (!followed.ended) {
      printer?.endLine();
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
      const answer = outcome.answer ?? '';
      // The words may lag the session by a moment; what the stream did not bring whole is printed from the session.
      if (printer === undefined || !(await printer.printed(answer, LAST_WORDS_MS))) {
        printer?.endLine();
        print(answer);
      }
      return;
    }
    printer?.endLine();
    info(renderOutcome(outcome));
    process.exitCode = 1;
  } finally {
    words?.stop();
    process.off('SIGINT', onInterrupt);
  }
}

/** The reading of a session's stream for `chat`: where it stands before the message is sent, and the printing of what comes after. */
interface ChatWords {
  print(printer: StreamPrinter, from?: 'from-sent' | 'from-now'): void;
  stop(): void;
}

/**
 * Where the session's stream stands before the message goes (so no word of its turn is missed),
 * or `undefined` when the stream cannot be read: then the answer is printed at the end, as
 * without streaming, after a line saying why.
 */
async function openWords(client: SessionClient, sessionId: string, settings: Settings): Promise<ChatWords | undefined> {
  let store: StreamStore | undefined;
  let end: number;
  let target: StreamTarget;
  try {
    store = openStreamStore(settings.streams);
    target = { store, sessionId };
    await assertSameStreamStore(client.temporal.connection.workflowService, client.temporal.options.namespace, settings.release.deployment, await store.identity());
    end = await streamEnd(target);
  } catch (error) {
    void store?.close();
    info(`the model's words cannot be shown as they come (${error instanceof Error ? error.message : String(error)}); the answer follows when the turn ends`);
    return undefined;
  }
  const opened = store;
  const stop = new AbortController();
  return {
    print(printer, from = 'from-sent') {
      void (async () => {
        try {
          const start = from === 'from-now' ? await streamEnd(target) : end;
          for await (const entry of readStream(target, start, { signal: stop.signal })) if (entry.kind === 'event') printer.take(entry.event);
        } catch (error) {
          if (!stop.signal.aborted) printer.line(`the model's words stopped coming (${error instanceof Error ? error.message : String(error)}); the answer follows when the turn ends`);
        }
      })();
    },
    stop: () => {
      stop.abort();
      void opened.close();
    },
  };
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

function info(line: string): void {
  process.stderr.write(`${line}\n`);
}
