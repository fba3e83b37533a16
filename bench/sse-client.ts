/**
 * A small Server-Sent Events reader over fetch, as a browser's EventSource reads (event, id,
 * data; comments skipped), for the benchmark and the tests of `GET /sessions/{id}/stream`.
 */
import { applyModelStreamEvent, type LiveAnswer, type ModelStreamEvent } from '../src/session/model-stream';

/** One event as it was read, with when it arrived (performance.now()). */
export interface SseEvent {
  event: string;
  id: string | null;
  data: string;
  at: number;
}

/** An open event stream: its status and headers, and its events as they come. */
export interface SseConnection {
  status: number;
  headers: Headers;
  /** The body, when the answer was not an event stream (an error's JSON). */
  body?: string;
  events: AsyncGenerator<SseEvent, void, undefined>;
  /** Closes the connection (what a browser does when the page goes, or the network drops). */
  close(): void;
}

/** Opens `url` as an event stream, sending `headers` (say `Last-Event-ID`). */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const close = (): void => controller.abort();
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream') || response.body === null) {
    const body = await response.text();
    return { status: response.status, headers: response.headers, body, events: (async function* () {})(), close };
  }
  return { status: response.status, headers: response.headers, events: parse(response.body, controller.signal), close };
}

async function* parse(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<SseEvent, void, undefined> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let event = '';
  let id: string | null = null;
  let data: string[] = [];
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (signal.aborted) return;
        throw error;
      }
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, { stream: true });
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop() ?? '';
      const at = performance.now();
      for (const line of lines) {
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', id, data: data.join('\n'), at };
          event = '';
          id = null;
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** What {@link readAnswer} read: the offsets of the events, in the order they came, and the answer they made. */
export interface ReadAnswer {
  offsets: number[];
  answer: LiveAnswer | null;
  /** When (Date.now()) the first text event came. */
  firstTextAt?: number;
  /** Whether every offset came once, in order, none missing. */
  ordered: boolean;
}

/**
 * Reads `connection` (a session's `/stream`) until a model call's answer ends (its `end`, of the
 * attempt being shown: a `reset` starts the answer over), or until `done` says so, putting the
 * events together as a reader shows them; `onEvent` sees each one. Throws when the stream ends
 * first, or after `timeoutMs`.
 */
export async function readAnswer(
  connection: SseConnection,
  options: { timeoutMs?: number; onEvent?: (event: ModelStreamEvent, answer: LiveAnswer | null) => void; done?: (answer: LiveAnswer) => boolean } = {},
): Promise<ReadAnswer> {
  const done = options.done ?? ((answer: LiveAnswer) => answer.outcome !== undefined);
  const timer = setTimeout(() => connection.close(), options.timeoutMs ?? 5 * 60_000);
  const offsets: number[] = [];
  let answer: LiveAnswer | null = null;
  let firstTextAt: number | undefined;
  try {
    for await (const event of connection.events) {
      if (event.id === null) continue;
      offsets.push(Number(event.id));
      const parsed = JSON.parse(event.data) as ModelStreamEvent;
      if (parsed.type === 'text' && firstTextAt === undefined) firstTextAt = Date.now();
      answer = applyModelStreamEvent(answer, parsed);
      options.onEvent?.(parsed, answer);
      if (answer !== null && done(answer)) break;
    }
  } finally {
    clearTimeout(timer);
    connection.close();
  }
  if (answer === null || !done(answer)) throw new Error(`the stream ended before the model call did (${offsets.length} events read)`);
  return { offsets, answer, ordered: offsets.every((offset, k) => offset === offsets[0]! + k), ...(firstTextAt !== undefined ? { firstTextAt } : {}) };
}
