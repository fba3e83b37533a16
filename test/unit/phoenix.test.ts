import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { PHOENIX_VERSION, PhoenixUnavailableError, findPhoenix, phoenixVenv } from '../../src/devserver';

// What `up --traces` says on a machine that cannot install its trace UI: one sentence naming what
// to install, and nothing half-made left to be taken for an installed Phoenix.

const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });

test('without python3 on PATH, --traces says to install python3 with its venv module, or to use a collector of ones own', async () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'phoenix-no-python-'));
  await assert.rejects(
    findPhoenix({ cacheDir, env: { PATH: join(cacheDir, 'no-such-folder') }, output: quiet }),
    (error: unknown) => {
      assert.ok(error instanceof PhoenixUnavailableError);
      assert.equal(
        error.message,
        `Arize Phoenix ${PHOENIX_VERSION} (the trace UI of --traces) is not in ${phoenixVenv(cacheDir)} and could not be installed: python3 was not found on PATH. ` +
          'Install python3 (3.11 to 3.14) with its venv module (Debian: apt-get install -y python3 python3-venv) and run again, ' +
          'or point OTEL_EXPORTER_OTLP_ENDPOINT at a collector of your own instead of --traces.',
      );
      return true;
    },
  );
  assert.equal(existsSync(join(phoenixVenv(cacheDir), 'agent-sessions-installed')), false, 'nothing is marked installed');
  assert.equal(existsSync(join(cacheDir, `venv-phoenix-${PHOENIX_VERSION}.lock`)), false, 'the lock is let go');
});
