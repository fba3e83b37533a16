/**
 * The load of the streaming benchmark, in a process of its own (`scripts/stream-load.ts`): a
 * scripted model streaming at a fixed rate (the model a deployment calls over the network), and
 * the HTTP service (reading the stream store the worker writes to, `AGENT_SESSIONS_STREAM_STORE`)
 * with SSE readers on the sessions that stream — everything but the worker
 * (which runs as `agent-sessions worker`, a process of its own, as deployed) and the client whose
 * latency the benchmark measures. Its work then shares an event loop with neither.
 *
 * Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, AGENT_SESSIONS_TASK_QUEUE (as every client),
 *      STREAM_LOAD_RATE (tokens per second), STREAM_LOAD_TOKENS (tokens per answer).
 * Protocol: one JSON line on stdout `{"ready":true,"model":URL}` once the model listens (a reader
 * passes over any line that is not a JSON object); then for each line `{"turns":N}` on stdin, N
 * turns streamed at once, each read by an SSE reader, answered by
 * `{"done":{"intact":K,"of":N,"firstWordsMs":[…]}}` (K: turns whose every event came once, in
 * order, and made the answer; for each turn, ms from the model's first token to the reader's first
 * words); `{"stop":true}` stops everything and exits.
 */
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { openSse, readAnswer } from '../sse-client';
import { SessionClient } from '../../src/client/session-client';
import { loadSettings } from '../../src/config';
import { startHttpServer } from '../../src/http/server';
import { startModelServer } from '../../src/model-server';
import { openStreamStore } from '../../src/streams';

/** The task the scripted model answers with its long answer. */
export const STREAM_LOAD_TASK = 'Write the long answer';

/** The most turns one command streams at once. */
const MAX_TURNS_AT_ONCE = 200;

/** The long answer of `tokens` tokens of 4 characters. */
export function longAnswer(tokens: number): string {
  return 'Streaming keeps the session history small while the reader sees every word. '.repeat(Math.ceil((tokens * 4) / 77) + 1).slice(0, tokens * 4);
}

/** Runs the load process; resolves when told to stop. */
export async function streamLoadMain(env: NodeJS.ProcessEnv): Promise<void> {
  const settings = loadSettings(env);
  const rate = Number(env.STREAM_LOAD_RATE ?? 100);
  const answer = longAnswer(Number(env.STREAM_LOAD_TOKENS ?? 2000));
  const model = await startModelServer({
    // A conversation per turn of a batch (`<task> #k`), so each turn's first token is known by its conversation's name.
    script: {
      conversations: Array.from({ length: MAX_TURNS_AT_ONCE }, (_, k) => ({ name: `long-${k}`, match: { firstUserMessage: `^${STREAM_LOAD_TASK} #${k}$` }, steps: [{ respond: { content: answer } }] })),
    },
    streaming: { tokensPerSecond: rate },
  });
  const client = await SessionClient.connect(settings.temporal);
  const streamStore = openStreamStore(settings.streams);
  const http = await startHttpServer({ client, port: 0, streamStore, deployment: settings.release.deployment });
  const say = (message: unknown): void => void process.stdout.write(`${JSON.stringify(message)}\n`);
  say({ ready: true, model: model.url });

  const streamedTurn = async (k: number, since: number): Promise<{ intact: boolean; firstWordsMs: number | undefined; why?: string }> => {
    const id = `stream-load-${randomUUID().slice(0, 8)}`;
    await client.start(id);
    const connection = await openSse(`${http.url}/sessions/${encodeURIComponent(id)}/stream`);
    // The reader is in (its `ready` came) before the message goes: it is a reader that came before the first words.
    if (connection.status === 200) await connection.events.next();
    const sent = client.sendMessage(id, `${STREAM_LOAD_TASK} #${k}`);
    let failure = connection.status === 200 ? '' : `GET /stream answered ${connection.status}: ${(connection.body ?? '').slice(0, 200)}`;
    const read = await readAnswer(connection).catch((error: Error) => {
      failure ||= error.message;
      return undefined;
    });
    await sent;
    // This turn's request to the model (its conversation is the turn's own), where its first token was stamped.
    const call = model.requests().find((r) => r.seq > since && r.conversation === `long-${k}` && r.firstTokenAt !== null);
    const intact = read !== undefined && read.ordered && read.answer?.outcome === 'completed' && read.answer.text === answer;
    const why =
      read === undefined
        ? failure
        : `ordered ${read.ordered}, outcome ${read.answer?.outcome ?? 'none'}, ${read.answer?.text.length ?? 0} of ${answer.length} characters, attempt ${read.answer?.attempt ?? 0}`;
    return {
      ...(intact ? {} : { why }),
      intact,
      firstWordsMs: call?.firstTokenAt != null && read?.firstTextAt !== undefined ? read.firstTextAt - Date.parse(call.firstTokenAt) : undefined,
    };
  };

  for await (const line of createInterface({ input: process.stdin })) {
    const command = JSON.parse(line) as { turns?: number; stop?: boolean };
    if (command.stop === true) break;
    const since = model.requests().reduce((max, r) => Math.max(max, r.seq), 0);
    // A turn that could not even begin (the server refused its message under load) is a turn that did not come whole, with its reason.
    const results = await Promise.all(
      Array.from({ length: Math.min(command.turns ?? 0, MAX_TURNS_AT_ONCE) }, (_, k) =>
        streamedTurn(k, since).catch((error: Error) => ({ intact: false, firstWordsMs: undefined, why: `the turn could not run: ${error.message.split('\n')[0]}` })),
      ),
    );
    const problems = [...new Set(results.flatMap((r) => (r.why !== undefined ? [r.why] : [])))].slice(0, 3);
    say({ done: { intact: results.filter((r) => r.intact).length, of: results.length, firstWordsMs: results.flatMap((r) => (r.firstWordsMs !== undefined ? [r.firstWordsMs] : [])), problems } });
  }
  // Told to stop, or its parent is gone (stdin closed): it never outlives the benchmark, even if the server went first.
  setTimeout(() => process.exit(0), 15_000).unref();
  await http.close();
  await streamStore.close();
  await client.closeConnection();
  await model.close();
}
