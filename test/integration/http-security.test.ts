import assert from 'node:assert/strict';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { before, describe, test } from 'node:test';
import { startHttpServer } from '../../src/http/server';
import { countAcceptedUpdates, httpCall, todo, uniqueId, useTestBed } from '../helpers';

const ALLOWED_ORIGIN = 'http://dashboard.example';
const EVIL = 'http://evil.example';
/** The HTTP service here is bound to 127.0.0.1, with no token, one allowed CORS origin and two configured Host names. */
const bed = useTestBed('http-security', { allowParallelInProgress: false }, {
  http: { corsOrigins: [ALLOWED_ORIGIN], allowedHosts: ['agents.example', 'proxy.example:9443'] },
});
let port: number;

before(async () => {
  await bed.ready;
  port = Number(new URL(bed.http.url).port);
});

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/**
 * One request with exactly the given headers, as a browser page or a foreign client could send
 * it: node:http adds nothing but `Host` (replaced when given) and `Content-Length` for a body;
 * fetch() would add a Content-Type of its own and cannot set `Host`.
 */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string, base = bed.http.url): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const list = JSON.stringify({ todos: [todo('Injected by another site', 'in_progress')] });

/** A session with one accepted write, written as a plain client would. */
async function sessionWithOneWrite(): Promise<string> {
  const id = uniqueId('http-sec');
  const first = await httpCall(bed.http.url, 'POST', `/sessions/${id}/todo_write`, { todos: [todo('Written by the owner')] });
  assert.equal(first.status, 200, JSON.stringify(first.json));
  return id;
}

async function acceptedWrites(id: string): Promise<number> {
  return countAcceptedUpdates((await httpCall(bed.http.url, 'GET', `/sessions/${id}/history`)).json);
}

describe('writes from web pages of other sites', () => {
  test('a cross-origin text/plain POST to todo_write is refused with 403 and leaves nothing in history', async () => {
    const id = await sessionWithOneWrite();
    const answer = await raw('POST', `/sessions/${id}/todo_write`, { Origin: EVIL, 'Content-Type': 'text/plain;charset=UTF-8' }, list);
    assert.equal(answer.status, 403, answer.text);
    assert.equal(answer.json.code, 'forbidden-origin');
    assert.match(answer.json.error, /evil\.example.*AGENT_SESSIONS_CORS_ORIGINS/);
    assert.equal(await acceptedWrites(id), 1);
    assert.deepEqual((await httpCall(bed.http.url, 'GET', `/sessions/${id}/todos`)).json, [todo('Written by the owner')]);
  });

  // Everything a page can send without a CORS preflight: a "simple" POST whose Content-Type is
  // one of the three form-like types, or none at all. Hono's csrf judges exactly these (and treats
  // a missing Content-Type as text/plain); each must be refused before it reaches a session.
  for (const [what, headers, body] of [
    ['text/plain', { 'Content-Type': 'text/plain' }, list],
    ['TEXT/PLAIN with a charset', { 'Content-Type': 'TEXT/PLAIN; charset=utf-8' }, list],
    ['an HTML form (urlencoded)', { 'Content-Type': 'application/x-www-form-urlencoded' }, `todos=${encodeURIComponent(list)}`],
    ['a multipart form', { 'Content-Type': 'multipart/form-data; boundary=x' }, `--x\r\nContent-Disposition: form-data; name="todos"\r\n\r\n${list}\r\n--x--\r\n`],
    ['no Content-Type and a body', {}, list],
    ['no Content-Type and no body (fetch with mode no-cors)', {}, undefined],
    ['Origin: null (a sandboxed frame)', { 'Content-Type': 'text/plain' }, list],
  ] as const) {
    test(`a cross-site POST with ${what} is refused with 403 by the origin check`, async () => {
      const id = await sessionWithOneWrite();
      const origin = what.startsWith('Origin: null') ? 'null' : EVIL;
      for (const path of [`/sessions/${id}/todo_write`, `/sessions/${id}/turn/start`, `/sessions/${id}/close`, '/sessions']) {
        const answer = await raw('POST', path, { Origin: origin, ...headers }, body);
        assert.equal(answer.status, 403, `${path}: ${answer.text}`);
        assert.equal(answer.json.code, 'forbidden-origin');
      }
      assert.equal(await acceptedWrites(id), 1);
      const state = (await httpCall(bed.http.url, 'GET', `/sessions/${id}`)).json;
      assert.equal(state.turn, 0, 'no turn was started');
      assert.equal(state.closed, false);
    });
  }

  test("a form POST is refused with 403 when a page sends it (browsers always send Origin with a POST), 415 when a client without Origin does", async () => {
    const id = await sessionWithOneWrite();
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const fromPage = await raw('POST', `/sessions/${id}/todo_write`, { ...form, Origin: EVIL, 'Sec-Fetch-Site': 'cross-site' }, 'todos=1');
    assert.equal(fromPage.status, 403, fromPage.text);
    const fromCurl = await raw('POST', `/sessions/${id}/todo_write`, form, list);
    assert.equal(fromCurl.status, 415, fromCurl.text);
    assert.match(fromCurl.json.error, /Content-Type: application\/json/);
    assert.equal(await acceptedWrites(id), 1);
  });

  test('a JSON POST carrying a foreign Origin, sent without a preflight as any non-browser client can, is refused with 403 and applies nothing', async () => {
    const id = await sessionWithOneWrite();
    for (const [origin, site] of [[EVIL, undefined], ['null', undefined], [undefined, 'cross-site'], [undefined, 'same-site']] as const) {
      const headers = { 'Content-Type': 'application/json', ...(origin !== undefined ? { Origin: origin } : {}), ...(site !== undefined ? { 'Sec-Fetch-Site': site } : {}) };
      const answer = await raw('POST', `/sessions/${id}/todo_write`, headers, JSON.stringify({ todos: [todo('Written by evil')] }));
      assert.equal(answer.status, 403, `${origin ?? site}: ${answer.text}`);
      assert.equal(answer.json.code, 'forbidden-origin');
    }
    assert.equal(await acceptedWrites(id), 1);
    assert.deepEqual((await httpCall(bed.http.url, 'GET', `/sessions/${id}/todos`)).json, [todo('Written by the owner')]);
    // The service's own pages and the configured origins still write.
    const own = await raw('POST', `/sessions/${id}/todo_write`, { 'Content-Type': 'application/json', Origin: bed.http.url, 'Sec-Fetch-Site': 'same-origin' }, JSON.stringify({ todos: [todo('Written by the dashboard')] }));
    assert.equal(own.status, 200, own.text);
    const listed = await raw('POST', `/sessions/${id}/todo_write`, { 'Content-Type': 'application/json', Origin: ALLOWED_ORIGIN }, JSON.stringify({ todos: [todo('Written by the allowed origin')] }));
    assert.equal(listed.status, 200, listed.text);
  });

  test('a JSON POST from another site needs a CORS preflight, and the preflight of a disallowed origin gets no allowance', async () => {
    const preflight = {
      Origin: EVIL,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'content-type',
    };
    const refused = await raw('OPTIONS', '/sessions/x/todo_write', preflight);
    assert.equal(refused.headers['access-control-allow-origin'], undefined);
    assert.equal(refused.headers['access-control-allow-credentials'], undefined);
    const allowed = await raw('OPTIONS', '/sessions/x/todo_write', { ...preflight, Origin: ALLOWED_ORIGIN });
    assert.equal(allowed.headers['access-control-allow-origin'], ALLOWED_ORIGIN);
    assert.match(String(allowed.headers['access-control-allow-methods']), /POST/);
  });

  test('a POST from the service’s own page (same Origin) is accepted', async () => {
    const id = uniqueId('http-sec-same');
    const answer = await raw('POST', `/sessions/${id}/todo_write`, { Origin: bed.http.url, 'Sec-Fetch-Site': 'same-origin', 'Content-Type': 'application/json' }, list);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(await acceptedWrites(id), 1);
  });

  test('a POST from an allowed CORS origin is accepted and carries the CORS headers', async () => {
    const id = uniqueId('http-sec-cors');
    const answer = await raw('POST', `/sessions/${id}/todo_write`, { Origin: ALLOWED_ORIGIN, 'Content-Type': 'application/json' }, list);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers['access-control-allow-origin'], ALLOWED_ORIGIN);
    assert.match(String(answer.headers['access-control-expose-headers']), /ETag/i);
    // text/plain from the allowed origin passes the origin check and meets the JSON rule.
    assert.equal((await raw('POST', `/sessions/${id}/todo_write`, { Origin: ALLOWED_ORIGIN, 'Content-Type': 'text/plain' }, list)).status, 415);
  });
});

describe('plain clients', () => {
  test('curl-like requests (no Origin, application/json) work, and so does a POST with no body and no Content-Type', async () => {
    const id = uniqueId('http-sec-curl');
    const write = await raw('POST', `/sessions/${id}/todo_write`, { 'Content-Type': 'application/json' }, list);
    assert.equal(write.status, 200, write.text);
    assert.equal((await raw('POST', `/sessions/${id}/turn/start`)).status, 202, 'curl -X POST …/turn/start');
    assert.equal((await raw('GET', `/sessions/${id}`)).json.turn, 1);
    assert.equal((await raw('POST', `/sessions/${id}/close`, { 'Content-Type': 'application/json; charset=utf-8' })).status, 200);
  });

  test('a text/plain POST without Origin is refused with 415 naming the Content-Type to send', async () => {
    const id = await sessionWithOneWrite();
    const answer = await raw('POST', `/sessions/${id}/todo_write`, { 'Content-Type': 'text/plain' }, list);
    assert.equal(answer.status, 415, answer.text);
    assert.equal(answer.json.code, 'unsupported-media-type');
    assert.match(answer.json.error, /Content-Type: application\/json.*got "text\/plain"/);
    assert.equal(await acceptedWrites(id), 1);
  });
});

describe('the Host header (DNS rebinding)', () => {
  test('a request for another Host name is refused with 421 and no data, naming the accepted names and the setting', async () => {
    const id = await sessionWithOneWrite();
    for (const path of [`/sessions/${id}`, `/sessions/${id}/todos`, '/sessions', `/sessions/${id}/history`, '/', '/openapi.json']) {
      const answer = await raw('GET', path, { Host: `evil.example:${port}` });
      assert.equal(answer.status, 421, `${path}: ${answer.text}`);
      assert.deepEqual(Object.keys(answer.json).sort(), ['code', 'error']);
      assert.equal(answer.json.code, 'misdirected-request');
      assert.match(answer.json.error, /"evil\.example:\d+".*127\.0\.0\.1:\d+.*AGENT_SESSIONS_ALLOWED_HOSTS/);
      assert.doesNotMatch(answer.text, new RegExp(`${id}|Written by the owner`));
    }
    const write = await raw('POST', `/sessions/${id}/todo_write`, { Host: `evil.example:${port}`, 'Content-Type': 'application/json' }, list);
    assert.equal(write.status, 421);
    assert.equal(await acceptedWrites(id), 1);
  });

  test('the bound address and, on loopback, localhost and [::1] with the bound port are accepted; other ports are not', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      assert.equal((await raw('GET', '/healthz', { Host: host })).status, 200, host);
    }
    for (const host of [`localhost:${port + 1}`, 'localhost', `127.0.0.2:${port}`, 'evil.example']) {
      assert.equal((await raw('GET', '/healthz', { Host: host })).status, 421, JSON.stringify(host));
    }
  });

  test('names from AGENT_SESSIONS_ALLOWED_HOSTS are accepted: a bare name on any port, host:port on that port only', async () => {
    const id = await sessionWithOneWrite();
    for (const host of ['agents.example', `agents.example:${port}`, 'Agents.Example:443', 'proxy.example:9443']) {
      const answer = await raw('GET', `/sessions/${id}/todos`, { Host: host });
      assert.equal(answer.status, 200, `${host}: ${answer.text}`);
    }
    assert.equal((await raw('GET', '/healthz', { Host: 'proxy.example:9444' })).status, 421);
    assert.equal((await raw('GET', '/healthz', { Host: 'proxy.example' })).status, 421);
  });

  test('a malformed AGENT_SESSIONS_ALLOWED_HOSTS entry is refused at start, naming the setting', async () => {
    await assert.rejects(startHttpServer({ client: bed.client, port: 0, allowedHosts: ['http://agents.example/'] }), /AGENT_SESSIONS_ALLOWED_HOSTS: "http:\/\/agents\.example\/" is not a host name/);
  });

  test("bound to every interface (as in docker-compose.yml), the machine's own addresses answer, including compose's healthcheck on 127.0.0.1:8080", async () => {
    const open = await startHttpServer({ client: bed.client, port: 0, host: '0.0.0.0' });
    try {
      const openPort = new URL(open.url).port;
      const base = `http://127.0.0.1:${openPort}`;
      const own = Object.values(networkInterfaces())
        .flatMap((list) => list ?? [])
        .filter((net) => net.family === 'IPv4')
        .map((net) => net.address);
      for (const address of ['127.0.0.1', 'localhost', ...own]) {
        assert.equal((await raw('GET', '/healthz', { Host: `${address}:${openPort}` }, undefined, base)).status, 200, address);
      }
      // What compose's healthcheck runs inside the container, fetch() and all.
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      assert.equal((await raw('GET', '/healthz', { Host: `evil.example:${openPort}` }, undefined, base)).status, 421);
    } finally {
      await open.close();
    }
  });
});

describe('the bearer token', () => {
  test('with a token, a request without it or with a wrong one is refused with 401 and a JSON sentence; a malformed header with 400', async () => {
    const guarded = await startHttpServer({ client: bed.client, port: 0, token: 's3cret' });
    try {
      const missing = await raw('GET', '/sessions', {}, undefined, guarded.url);
      assert.equal(missing.status, 401);
      assert.equal(missing.json.code, 'unauthorized');
      assert.match(missing.json.error, /Authorization: Bearer <token>/);
      assert.match(String(missing.headers['www-authenticate']), /^Bearer realm="agent-sessions"/);
      assert.equal((await raw('GET', '/sessions', { Authorization: 'Bearer s3cre' }, undefined, guarded.url)).status, 401);
      assert.equal((await raw('GET', '/sessions', { Authorization: 'Basic czNjcmV0' }, undefined, guarded.url)).status, 400);
      assert.equal((await raw('GET', '/sessions', { Authorization: 'Bearer s3cret' }, undefined, guarded.url)).status, 200);
      assert.equal((await raw('GET', '/sessions', { Authorization: 'bearer s3cret' }, undefined, guarded.url)).status, 200, 'the scheme is case-insensitive');
      // The origin check comes first: a page of another site learns nothing about the token.
      assert.equal((await raw('POST', '/sessions/x/turn/start', { Origin: EVIL, Authorization: 'Bearer s3cret' }, undefined, guarded.url)).status, 403);
    } finally {
      await guarded.close();
    }
  });

  test('a token with characters a bearer token cannot carry is refused at start', async () => {
    await assert.rejects(startHttpServer({ client: bed.client, port: 0, token: 'has spaces!' }), /AGENT_SESSIONS_TOKEN holds characters a bearer token cannot carry/);
  });
});
