/* Talking to the service: the bearer token kept in this tab, JSON requests, and errors that
 * carry the server's own sentence. */
/* global sessionStorage, fetch */

const TOKEN_KEY = 'agent-sessions.token';

/** An answer that was not 2xx; `message` is the server's `{ "error": … }` text when it sent one. */
export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let unauthorized = () => {};

/**
 * Sets what happens when the server answers 401 (the token gate): a callback rather than an
 * import, so this module does not depend on the pages that depend on it.
 */
export function onUnauthorized(callback) {
  unauthorized = callback;
}

/** Calls the 401 callback: for readers (the event stream) that make their own requests. */
export function reportUnauthorized() {
  unauthorized();
}

/** Keeps the token for this tab only (session storage). */
export function storeToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** The Authorization header for the stored token, or none. */
export function authHeaders() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { Authorization: 'Bearer ' + token } : {};
}

/** An {@link HttpError} from a failed response, with its `error` text when the body is JSON. */
export async function errorFrom(response) {
  let message = `${response.status} ${response.statusText}`.trim();
  try {
    const body = await response.json();
    if (body && typeof body.error === 'string') message = body.error;
  } catch {
    // not JSON: keep the status line
  }
  return new HttpError(response.status, message);
}

/** The API path of a session (ids of subagents contain "/", hence the encoding). */
export const sessionPath = (id, suffix) => '/sessions/' + encodeURIComponent(id) + (suffix || '');

/** A JSON request with the token; throws an {@link HttpError} unless the answer is 2xx. */
export async function api(path, init) {
  const options = init || {};
  const response = await fetch(path, {
    ...options,
    cache: 'no-store',
    headers: { Accept: 'application/json', ...authHeaders(), ...(options.headers || {}) },
  });
  if (response.status === 401) {
    unauthorized();
    throw new HttpError(401, 'This server needs an access token.');
  }
  if (!response.ok) throw await errorFrom(response);
  return response.status === 204 ? null : response.json();
}

/** Whether the stored token (or none) is accepted: GET /auth answers 204 or 401. */
export async function tokenAccepted() {
  try {
    const response = await fetch('/auth', { headers: authHeaders(), cache: 'no-store' });
    return response.status !== 401;
  } catch {
    return true; // unreachable server: let the page say so
  }
}

let config = null;

/**
 * The service's settings the dashboard uses (`GET /dashboard-config`): `traceUrl`, the template
 * a turn's trace opens at (`{traceId}` for its id), or null. Asked once per page load.
 */
export function dashboardConfig() {
  config ??= api('/dashboard-config').catch(() => ({ traceUrl: null }));
  return config;
}
