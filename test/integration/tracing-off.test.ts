import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT, temporalAddress, uniqueId } from '../helpers';

interface Loaded {
  buildId: string;
  loaded: string[];
}

/** Runs test/fixtures/loaded-modules.ts (a worker, the HTTP service and a client, one turn) with `env`. */
async function runProgram(env: NodeJS.ProcessEnv): Promise<Loaded> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const childEnv = { ...clean, TEMPORAL_ADDRESS: await temporalAddress(), AGENT_SESSIONS_TASK_QUEUE: uniqueId('tracing-off'), ...env };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'fixtures', 'loaded-modules.ts')], { env: childEnv, cwd: ROOT, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`${error.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Loaded);
    });
  });
}

describe('tracing switched off and on', () => {
  let untraced: Loaded;
  let traced: Loaded;

  test('with no OTLP endpoint set, a worker, the HTTP service and a client running a turn load no OpenTelemetry module', async () => {
    untraced = await runProgram({});
    assert.deepEqual(untraced.loaded, []);
  });

  test('with one set, they load OpenTelemetry and Temporal’s interceptors (the check above can fail)', async () => {
    // Nothing listens there: the spans are dropped, which the turn does not notice.
    traced = await runProgram({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SERVICE_NAME: 'loaded-modules' });
    assert.ok(traced.loaded.some((path) => /interceptors-opentelemetry/.test(path)), traced.loaded.join('\n'));
    assert.ok(traced.loaded.some((path) => /exporter-trace-otlp-proto/.test(path)), 'the exporter of the default protocol');
    assert.ok(!traced.loaded.some((path) => /exporter-trace-otlp-grpc/.test(path)), 'and no other exporter');
  });

  test('the worker’s build id is the same with tracing on and off', () => {
    assert.match(untraced.buildId, /^b[0-9a-f]{12}$/);
    assert.equal(traced.buildId, untraced.buildId);
  });
});
