import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { RunningPostgres } from './postgres-cluster';

/** The stream store's database and its user in the cluster's PostgreSQL: apart from Temporal's databases and Temporal's user. */
export const STREAM_DATABASE = 'agent_sessions_streams';

/**
 * Makes sure the cluster's PostgreSQL has the stream store's database, owned by a user of its own
 * (its password generated once and kept beside PostgreSQL's, readable by its owner only), and
 * answers the URL workers and the HTTP service are given as `AGENT_SESSIONS_STREAM_STORE`. The
 * tables are created by the store itself on first use.
 */
export async function ensureStreamDatabase(postgres: RunningPostgres): Promise<string> {
  const passwordFile = join(dirname(postgres.dataDir), 'streams-password');
  let password = (await readFile(passwordFile, 'utf8').catch(() => '')).trim();
  if (password === '') {
    password = randomBytes(18).toString('hex');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  }
  const roleExists = (await postgres.query('postgres', `SELECT 1 FROM pg_roles WHERE rolname = '${STREAM_DATABASE}'`)).trim() === '1';
  await postgres.query('postgres', `${roleExists ? 'ALTER' : 'CREATE'} ROLE ${STREAM_DATABASE} LOGIN PASSWORD '${password}'`);
  const databaseExists = (await postgres.query('postgres', `SELECT 1 FROM pg_database WHERE datname = '${STREAM_DATABASE}'`)).trim() === '1';
  if (!databaseExists) await postgres.query('postgres', `CREATE DATABASE ${STREAM_DATABASE} OWNER ${STREAM_DATABASE}`);
  return `postgres://${STREAM_DATABASE}:${password}@${postgres.host}:${postgres.port}/${STREAM_DATABASE}`;
}
