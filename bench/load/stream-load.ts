/**
 * The load of the streaming benchmark, in a process of its own (`scripts/stream-load.ts`): a
 * scripted model streaming at a fixed rate (the model a deployment calls over the network), and
 * the HTTP service with SSE readers on the sessions that stream — everything but the worker
 * (which runs as `agent-sessions worker`, a process of its own, as deployed) and the client whose
 * latency the benchmark measures. Its work then shares an event loop with neither.
 *
 * Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, AGENT_SESSIONS_TASK_QUEUE (as every client),
 *      STREAM_LOAD_RATE (tokens per second), STREAM_LOAD_TOKENS (tokens per answer).
 * Protocol: one JSON line on stdout `{"ready":true,"model":URL}` once the model listens (a reader
 * passes over any line that is not a JSON object); then for each line `{"turns":N}` on stdin, N
 * turns streamed at once, each read by an SSE reader, answered by `{"done":{"intact":K,"of":N}}`
 * (K: turns whose every event came once, in order, and made the answer); `{"stop":true}` stops
 * everything and exits.
 */
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { openSse, readAnswer } from '../sse-client';
import { SessionClient } from '../../src/client/session-client';
import { loadSettings } from '../../src/config';
import { startHttpServer } from '../../src/http/server';
import { startModelServer } from '../../src/model-server';

/** The task the scripted model answers with its long answer. */
export const STREAM_LOAD_TASK = 'Write the long answer';

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
    script: { conversations: [{ name: 'long', match: { firstUserMessage: `^${STREAM_LOAD_TASK}$` }, steps: [{ respond: { content: answer } }] }] },
    streaming: { tokensPerSecond: rate },
  });
  const client = await SessionClient.connect(settings.temporal);
  const http = await startHttpServer({ client, port: 0 });
  const say = (message: unknown): void => void process.stdout.write(`${JSON.stringify(message)}\n`);
  say({ ready: true, model: model.url });

  const streamedTurn = async (): Promise<boolean> => {
    const id = `stream-load-${randomUUID().slice(0, 8)}`;
    await client.start(id);
    const connection = await openSse(`${http.url}/sessions/${encodeURIComponent(id)}/stream`);
    const sent = client.sendMessage(id, STREAM_LOAD_TASK);
    const read = await readAnswer(connection).catch(() => undefined);
    await sent;
    return read !== undefined && read.ordered && read.answer?.outcome === 'completed' && read.answer.text === answer;
  };

  for await (const line of createInterface({ input: process.stdin })) {
    const command = JSON.parse(line) as { turns?: number; stop?: boolean };
    if (command.stop === true) break;
    const results = await Promise.all(Array.from({ length: command.turns ?? 0 }, streamedTurn));
    say({ done: { intact: results.filter(Boolean).length, of: results.length } });
  }
  // Told to stop, or its parent is gone (stdin closed): it never outlives the benchmark, even if the server went first.
  setTimeout(() => process.exit(0), 15_000).unref();
  await http.close();
  await client.closeConnection();
  await model.close();
}
