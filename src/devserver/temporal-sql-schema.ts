import { Writable } from 'node:stream';
import { describeFailure, runStreaming } from './executables';
import type { RunningPostgres } from './postgres-cluster';

/**
 * Temporal's two PostgreSQL databases and the schema `temporal-sql-tool` applies to each. The
 * names are the schemas embedded in the tool (`--schema-name`), the same files docker-compose.yml's
 * admin-tools job reads from `/etc/temporal/schema/postgresql/v12/…`.
 */
export const TEMPORAL_DATABASES = Object.freeze([
  { database: 'temporal', schemaName: 'postgresql/v12/temporal' },
  { database: 'temporal_visibility', schemaName: 'postgresql/v12/visibility' },
] as const);

/** What {@link ensureTemporalSchemas} did to one database. */
export interface SchemaChange {
  database: string;
  /** The schema version before, or `undefined` when the database had none (first start). */
  from: string | undefined;
  /** The schema version after. */
  to: string;
}

/** Thrown when a schema step fails; the message names the step and holds the tool's last output. */
export class TemporalSchemaError extends Error {
  override readonly name = 'TemporalSchemaError';
}

/**
 * Brings both Temporal databases to the schema of the tool's release, doing only what is missing:
 * `create-database` when the database does not exist, `setup-schema -v 0.0` when it has no
 * version table, then `update-schema` (which does nothing on a current schema). The same steps
 * as docker-compose.yml's one-shot admin-tools job, decided by looking at the database instead
 * of by which command fails, so an interrupted first start is completed by the next one.
 *
 * @throws {TemporalSchemaError} a step failed.
 */
export async function ensureTemporalSchemas(sqlTool: string, postgres: RunningPostgres): Promise<SchemaChange[]> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '',
    SQL_PLUGIN: 'postgres12',
    SQL_HOST: postgres.host,
    SQL_PORT: String(postgres.port),
    SQL_USER: postgres.user,
    // From the environment, not the command line, so the password is not in `ps`.
    SQL_PASSWORD: postgres.password,
  };
  const run = async (database: string, step: string, args: string[]): Promise<void> => {
    const exit = await runStreaming(sqlTool, ['--db', database, ...args], { cwd: postgres.dataDir, env, output: discard() });
    if (exit.code !== 0) throw new TemporalSchemaError(`${describeFailure(`temporal-sql-tool ${step} on database ${database}`, exit)}`);
  };

  const changes: SchemaChange[] = [];
  for (const { database, schemaName } of TEMPORAL_DATABASES) {
    // The names are constants of this file, never input: safe to put in the SQL text.
    const exists = (await postgres.query('postgres', `SELECT count(*) FROM pg_database WHERE datname = '${database}'`)) === '1';
    if (!exists) await run(database, 'create-database', ['create-database']);
    const from = await schemaVersion(postgres, database);
    if (from === undefined) await run(database, 'setup-schema', ['setup-schema', '-v', '0.0']);
    await run(database, 'update-schema', ['update-schema', '--schema-name', schemaName]);
    const to = await schemaVersion(postgres, database);
    if (to === undefined) throw new TemporalSchemaError(`database ${database} has no schema version after update-schema`);
    changes.push({ database, from, to });
  }
  return changes;
}

async function schemaVersion(postgres: RunningPostgres, database: string): Promise<string | undefined> {
  const hasTable = await postgres.query(database, "SELECT to_regclass('public.schema_version') IS NOT NULL");
  if (hasTable !== 't') return undefined;
  const version = await postgres.query(database, `SELECT curr_version FROM schema_version WHERE version_partition = 0 AND db_name = '${database}'`);
  return version === '' ? undefined : version;
}

/** The tool logs every statement at debug level: keep only what `runStreaming` remembers for a failure. */
function discard(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}
