import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, parse } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { executableName, executableProblem, findOnPath, isProcessAlive } from './executables';
import { ManagedProcess } from './managed-process';

/** The PostgreSQL programs a cluster needs, all from one installation's `bin` folder. */
export interface PostgresBinaries {
  /** The folder they are in, e.g. `/usr/lib/postgresql/15/bin`. */
  readonly dir: string;
  readonly initdb: string;
  readonly postgres: string;
  readonly pgCtl: string;
  readonly pgIsready: string;
  readonly psql: string;
}

/** Thrown when PostgreSQL cannot be found, set up or started; the message says what to do. */
export class PostgresClusterError extends Error {
  override readonly name = 'PostgresClusterError';
}

/** Where Debian and Ubuntu install each PostgreSQL major version (`initdb` is not on PATH there). */
const DEBIAN_POSTGRES_ROOT = '/usr/lib/postgresql';

/** The user PostgreSQL runs as when agent-sessions runs as root (the Debian package creates it). */
export const POSTGRES_SYSTEM_USER = 'postgres';

/**
 * Finds `initdb`, `postgres`, `pg_ctl`, `pg_isready` and `psql` of one installation: the folder
 * of `initdb` on PATH (links followed, so a link in /usr/local/bin leads to the real folder), else
 * the newest `/usr/lib/postgresql/<major>/bin`. With `major` (the `PG_VERSION` of an existing
 * data folder) that version's folder is preferred, since a data folder only runs on its own
 * major version.
 *
 * @throws {PostgresClusterError} no installation has all five programs; the message says how to install one.
 */
export async function findPostgresBinaries(env: NodeJS.ProcessEnv = process.env, major?: string): Promise<PostgresBinaries> {
  const candidates: string[] = [];
  if (major !== undefined) candidates.push(join(DEBIAN_POSTGRES_ROOT, major, 'bin'));
  const initdb = await findOnPath('initdb', env);
  if (initdb) candidates.push(dirname(await realpath(initdb)));
  const versions = await readdir(DEBIAN_POSTGRES_ROOT).catch(() => [] as string[]);
  for (const version of versions.filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))) {
    candidates.push(join(DEBIAN_POSTGRES_ROOT, version, 'bin'));
  }
  const tried: string[] = [];
  for (const dir of new Set(candidates)) {
    const binaries = binariesIn(dir);
    const missing: string[] = [];
    for (const [name, path] of Object.entries(binaries)) {
      if (name !== 'dir' && (await executableProblem(path))) missing.push(parse(path).base);
    }
    if (missing.length === 0) return binaries;
    tried.push(`${dir} (no ${missing.join(', ')})`);
  }
  throw new PostgresClusterError(
    `PostgreSQL is needed for the cluster, but initdb was not found on PATH or in ${DEBIAN_POSTGRES_ROOT}/<version>/bin` +
      `${tried.length > 0 ? `; incomplete installations: ${tried.join('; ')}` : ''}. ` +
      'Install it: `apt-get install postgresql-15` on Debian or Ubuntu (any version from 12 works), ' +
      '`brew install postgresql@15` on macOS, or put the bin folder of an installed PostgreSQL on PATH.',
  );
}

function binariesIn(dir: string): PostgresBinaries {
  return {
    dir,
    initdb: join(dir, executableName('initdb')),
    postgres: join(dir, executableName('postgres')),
    pgCtl: join(dir, executableName('pg_ctl')),
    pgIsready: join(dir, executableName('pg_isready')),
    psql: join(dir, executableName('psql')),
  };
}

/** Options for {@link startPostgres}. */
export interface PostgresOptions {
  /** The folder holding the cluster: `pgdata/` (PostgreSQL's data directory) and `password` (mode 0600). Created when missing. */
  dir: string;
  /** Loopback port to listen on. */
  port: number;
  /** The superuser role the cluster is created with; Temporal connects as it, as in docker-compose.yml. Defaults to `temporal`. */
  user?: string;
  /** Where PostgreSQL's prefixed log lines go. */
  output: NodeJS.WritableStream;
  /** Where the lines saying it died and restarts go; `output` unless told (see {@link ManagedProcess}). */
  notices?: NodeJS.WritableStream;
  /** Restart PostgreSQL when it dies by itself (see {@link ManagedProcess}). Defaults to `'no'`. */
  restart?: 'unless-stopped' | 'no';
  /** How long to wait for it to accept connections. Defaults to 60 seconds. */
  startTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** A running PostgreSQL cluster, from {@link startPostgres}. */
export interface RunningPostgres {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly user: string;
  /** The generated password of `user`, kept in `<dir>/password`. */
  readonly password: string;
  /** PostgreSQL's data directory. */
  readonly dataDir: string;
  /** `true` when this start created the cluster with initdb. */
  readonly created: boolean;
  readonly binaries: PostgresBinaries;
  /** The postmaster process; `kill('SIGQUIT')` is what `pg_ctl stop -m immediate` sends. */
  readonly process: ManagedProcess;
  /** Runs one SQL statement with psql and resolves with its unaligned output (no header). */
  query(database: string, sql: string): Promise<string>;
  /** Resolves once PostgreSQL accepts connections again (after a restart). */
  ready(timeoutMs?: number): Promise<void>;
  /** Fast shutdown (what `pg_ctl stop -m fast` sends): open transactions are rolled back, data stays. */
  stop(): Promise<void>;
}

/**
 * Starts a PostgreSQL cluster kept in `options.dir`, creating it with initdb on the first start:
 * password authentication (scram-sha-256) for every connection, a generated password stored in
 * a file only its owner can read, listening on 127.0.0.1 only, no Unix socket. Later starts
 * reuse the data. PostgreSQL refuses to run as root, so when this process is root it runs
 * initdb and the server as the `postgres` user and gives that user the data directory.
 *
 * @throws {PostgresClusterError} PostgreSQL is not installed, the data folder cannot be used,
 * it is already running from another process, or it did not start.
 */
export async function startPostgres(options: PostgresOptions): Promise<RunningPostgres> {
  const env = options.env ?? process.env;
  const user = options.user ?? 'temporal';
  const dataDir = join(options.dir, 'pgdata');
  const existing = await readFile(join(dataDir, 'PG_VERSION'), 'utf8').then((v) => v.trim(), () => undefined);
  const binaries = await findPostgresBinaries(env, existing);
  const runAs = await unprivilegedUser();

  await mkdir(options.dir, { recursive: true });
  if (runAs) await assertReachable(options.dir, runAs);
  const password = await readOrCreatePassword(join(options.dir, 'password'));
  await assertNotRunning(dataDir);

  if (existing === undefined) await initdb(binaries, dataDir, user, password, runAs, options.output);

  const postmaster = new ManagedProcess({
    name: 'postgres',
    command: binaries.postgres,
    args: ['-D', dataDir, '-p', String(options.port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    env: { PATH: env['PATH'] ?? '', LANG: 'C' },
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    output: options.output,
    ...(options.notices !== undefined ? { notices: options.notices } : {}),
    stopSignal: 'SIGINT',
    stopTimeoutMs: 60_000,
    killSignal: 'SIGQUIT',
    restart: options.restart ?? 'no',
  });
  const clientEnv = { PATH: env['PATH'] ?? '', PGPASSWORD: password, PGCONNECT_TIMEOUT: '5' };
  const ready = async (timeoutMs = options.startTimeoutMs ?? 60_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await accepts(binaries.pgIsready, options.port, user, clientEnv)) return;
      if (!postmaster.isRunning() && (options.restart ?? 'no') === 'no') {
        throw new PostgresClusterError(`PostgreSQL (${binaries.postgres}) exited before accepting connections. ${postmaster.describeTail()}`);
      }
      if (Date.now() > deadline) {
        throw new PostgresClusterError(
          `PostgreSQL did not accept connections on 127.0.0.1:${options.port} within ${Math.round(timeoutMs / 1000)}s. ${postmaster.describeTail()}`,
        );
      }
      await sleep(200);
    }
  };

  postmaster.start();
  try {
    await ready();
  } catch (error) {
    await postmaster.stop();
    throw error;
  }
  return {
    host: '127.0.0.1',
    port: options.port,
    user,
    password,
    dataDir,
    created: existing === undefined,
    binaries,
    process: postmaster,
    query: (database, sql) => psql(binaries.psql, options.port, user, database, sql, clientEnv),
    ready,
    stop: async () => {
      await postmaster.stop();
    },
  };
}

interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

/** The user to run PostgreSQL as, or `undefined` when this process is not root and can run it itself. */
async function unprivilegedUser(): Promise<SystemUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const [uid, gid] = await Promise.all([idOf('-u'), idOf('-g')]);
  if (uid === undefined || gid === undefined) {
    throw new PostgresClusterError(
      `agent-sessions runs as root and PostgreSQL refuses to run as root, but there is no user "${POSTGRES_SYSTEM_USER}" ` +
        'to run it as (Debian\'s postgresql package creates one). Create it (`useradd --system --home-dir /var/lib/postgresql postgres`) ' +
        'or run agent-sessions as an ordinary user.',
    );
  }
  return { name: POSTGRES_SYSTEM_USER, uid, gid };
}

function idOf(flag: '-u' | '-g'): Promise<number | undefined> {
  return new Promise((done) => {
    execFile('id', [flag, POSTGRES_SYSTEM_USER], { timeout: 10_000 }, (error, stdout) => {
      const id = Number(stdout.trim());
      done(error || !Number.isInteger(id) ? undefined : id);
    });
  });
}

/** Every folder above `dir` (and `dir` itself) must be enterable by the user PostgreSQL runs as. */
async function assertReachable(dir: string, runAs: SystemUser): Promise<void> {
  for (let folder = dir; ; folder = dirname(folder)) {
    const info = await stat(folder);
    const mode = info.mode;
    const enterable = (info.uid === runAs.uid && mode & 0o100) || (info.gid === runAs.gid && mode & 0o010) || mode & 0o001;
    if (!enterable) {
      throw new PostgresClusterError(
        `PostgreSQL refuses to run as root, so agent-sessions runs it as the user "${runAs.name}", which cannot enter ` +
          `${folder} (mode ${(mode & 0o777).toString(8).padStart(3, '0')}, owned by uid ${info.uid}). Choose a --data folder ` +
          `that user can reach (the project's data folder usually is), or allow it in (chmod o+x ${folder}).`,
      );
    }
    if (dirname(folder) === folder) return;
  }
}

async function readOrCreatePassword(file: string): Promise<string> {
  try {
    const info = await stat(file);
    if ((info.mode & 0o077) !== 0) {
      throw new PostgresClusterError(
        `${file} holds the PostgreSQL password but others can read it (mode ${(info.mode & 0o777).toString(8)}): chmod 600 ${file}`,
      );
    }
    const password = (await readFile(file, 'utf8')).trim();
    if (password === '') throw new PostgresClusterError(`${file} is empty: delete the whole data folder to start a new cluster`);
    return password;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // Hex: safe in a URL, a YAML string and a shell word alike.
  const password = randomBytes(24).toString('hex');
  await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return password;
}

async function assertNotRunning(dataDir: string): Promise<void> {
  const pidFile = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  const pid = Number(pidFile?.split('\n')[0]);
  // A pid that is gone is a stale file, which PostgreSQL itself clears on start.
  if (!Number.isInteger(pid) || pid <= 0 || !isProcessAlive(pid)) return;
  throw new PostgresClusterError(
    `PostgreSQL is already running on ${dataDir} (pid ${pid}): another \`agent-sessions cluster\` uses this data folder, ` +
      `or one was killed without stopping it. Stop that one first (Ctrl-C, or \`kill -INT ${pid}\` for a leftover PostgreSQL).`,
  );
}

async function initdb(
  binaries: PostgresBinaries,
  dataDir: string,
  user: string,
  password: string,
  runAs: SystemUser | undefined,
  output: NodeJS.WritableStream,
): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // initdb reads the password from a file, which the user it runs as must own; it is removed at once.
  const pwfile = join(dirname(dataDir), 'initdb-password');
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (runAs) {
    await chown(dataDir, runAs.uid, runAs.gid);
    await chown(pwfile, runAs.uid, runAs.gid);
  }
  const run = new ManagedProcess({
    name: 'initdb',
    command: binaries.initdb,
    args: ['-D', dataDir, '-U', user, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-locale'],
    env: { PATH: process.env['PATH'] ?? '', LANG: 'C' },
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    output,
    stopSignal: 'SIGTERM',
    stopTimeoutMs: 10_000,
    killSignal: 'SIGKILL',
    restart: 'no',
  });
  try {
    run.start();
    const exit = await run.exited();
    if (exit?.code !== 0) {
      throw new PostgresClusterError(`initdb could not create the PostgreSQL cluster in ${dataDir}. ${run.describeTail()}`);
    }
  } finally {
    await rm(pwfile, { force: true });
  }
}

function accepts(pgIsready: string, port: number, user: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((done) => {
    execFile(pgIsready, ['-q', '-h', '127.0.0.1', '-p', String(port), '-U', user, '-d', 'postgres', '-t', '2'], { env, timeout: 10_000 }, (error) =>
      done(!error),
    );
  });
}

function psql(command: string, port: number, user: string, database: string, sql: string, env: NodeJS.ProcessEnv): Promise<string> {
  const args = ['-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(port), '-U', user, '-d', database, '-c', sql];
  return new Promise((done, fail) => {
    execFile(command, args, { env, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) return fail(new PostgresClusterError(`psql on database ${database} failed: ${stderr.trim() || error.message}`));
      done(stdout.trim());
    });
  });
}
