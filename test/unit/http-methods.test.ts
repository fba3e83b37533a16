import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SessionClient } from '../../src/client';
import { createHttpApp } from '../../src/http/app';

// No Temporal is reached: routing answers before any session is asked.
const { app } = createHttpApp({ client: SessionClient.lazy({ address: '127.0.0.1:1', taskQueue: 'unused' }), allowedHosts: ['127.0.0.1'] });

async function ask(method: string, path: string) {
  const answer = await app.request(`http://127.0.0.1${path}`, { method, headers: { Host: '127.0.0.1' } });
  const text = await answer.text();
  return { status: answer.status, allow: answer.headers.get('allow'), json: text === '' ? undefined : JSON.parse(text) };
}

describe('methods a path does not have', () => {
  test('a known path asked with a method it lacks answers 405 with Allow and the JSON error', async () => {
    const answer = await ask('DELETE', '/healthz');
    assert.equal(answer.status, 405);
    assert.equal(answer.allow, 'GET, HEAD, OPTIONS');
    assert.deepEqual(answer.json, { error: '/healthz does not answer DELETE: it answers GET, HEAD', code: 'method-not-allowed' });
  });

  test('a path with a parameter is matched as the router matches it, an encoded "/" included', async () => {
    const answer = await ask('GET', `/sessions/${encodeURIComponent('build-42/tests')}/todo_write`);
    assert.equal(answer.status, 405);
    assert.equal(answer.allow, 'POST, OPTIONS');
    assert.equal(answer.json.code, 'method-not-allowed');
    assert.equal((await ask('PUT', '/sessions')).allow, 'GET, HEAD, POST, OPTIONS');
  });

  test('OPTIONS on a known path answers 204 with Allow; an unknown path is still 404', async () => {
    const options = await ask('OPTIONS', '/sessions/demo/turn/start');
    assert.deepEqual([options.status, options.allow, options.json], [204, 'POST, OPTIONS', undefined]);
    const unknown = await ask('GET', '/no/such/endpoint');
    assert.deepEqual([unknown.status, unknown.allow, unknown.json.code], [404, null, 'no-such-endpoint']);
    assert.equal((await ask('DELETE', '/no/such/endpoint')).status, 404);
  });
});
