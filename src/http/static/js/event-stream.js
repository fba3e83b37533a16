/* The live stream `GET /sessions/{id}/events`, read with fetch() so the bearer token can be sent
 * (EventSource cannot send headers), with reconnection and exponential backoff. */
/* global fetch, TextDecoder, setTimeout, clearTimeout */
import { authHeaders, errorFrom, reportUnauthorized } from './api.js';

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 15000;

/**
 * Reads a Server-Sent Events stream with fetch, parsing `event:`/`id:`/`data:` lines, and
 * reconnects with exponential backoff whenever the stream ends or fails, until `signal` aborts.
 * A 401 goes to the token gate and ends the reading. With `options.resume`, a reconnection sends
 * the last `id:` received as `Last-Event-ID`, as a browser's EventSource does, so the stream
 * goes on right after it.
 */
export async function followEvents(path, signal, handlers, options = {}) {
  let delay = RECONNECT_MIN_MS;
  let lastId = null;
  const onEvent = (message) => {
    if (message.id !== null) lastId = message.id;
    handlers.onEvent(message);
  };
  while (!signal.aborted) {
    try {
      const resume = options.resume && lastId !== null ? { 'Last-Event-ID': lastId } : {};
      const response = await fetch(path, {
        headers: { Accept: 'text/event-stream', ...authHeaders(), ...resume },
        cache: 'no-store',
        signal,
      });
      if (response.status === 401) {
        reportUnauthorized();
        return;
      }
      if (!response.ok || !response.body) throw await errorFrom(response);
      handlers.onOpen();
      delay = RECONNECT_MIN_MS;
      await readEventStream(response.body, onEvent);
    } catch (error) {
      if (signal.aborted) return;
      handlers.onError(error);
    }
    if (signal.aborted) return;
    handlers.onRetry(delay);
    await sleep(delay, signal);
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  }
}

async function readEventStream(body, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let id = null;
  let data = [];
  const line = (text) => {
    if (text === '') {
      if (data.length > 0) onEvent({ event: event || 'message', id, data: data.join('\n') });
      event = '';
      data = [];
      return;
    }
    if (text.startsWith(':')) return; // comment / keep-alive
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    // Hold back a trailing CR: it may be the first half of a CRLF.
    const hold = buffer.endsWith('\r') ? 1 : 0;
    const lines = buffer.slice(0, buffer.length - hold).split(/\r\n|\r|\n/);
    buffer = lines.pop() + buffer.slice(buffer.length - hold);
    lines.forEach(line);
  }
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
