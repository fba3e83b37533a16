import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ClusterPorts } from './cluster-ports';

/**
 * The Temporal environment name of the shared configuration: the server reads
 * `deploy/temporal/<name>.yaml`. docker-compose.yml mounts the same file as the image's `docker.yaml`.
 */
export const TEMPORAL_CONFIG_ENVIRONMENT = 'production';

/** The folder of this package (the one holding `package.json`, `bin/` and `deploy/`), compiled or not. */
export function packageRoot(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'deploy', 'temporal'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no deploy/temporal folder above ${__dirname}: is agent-sessions installed completely?`);
  }
}

/** `deploy/temporal`: `production.yaml` and `dynamic-config.yaml`, shared with docker-compose.yml. */
export function temporalConfigDir(): string {
  return join(packageRoot(), 'deploy', 'temporal');
}

/**
 * The arguments of `temporal-server` that load the shared configuration. The server joins
 * `--root` and `--config` into the folder it reads `<--env>.yaml` from.
 */
export function temporalServerArgs(configDir: string = temporalConfigDir(), environment: string = TEMPORAL_CONFIG_ENVIRONMENT): string[] {
  // --allow-no-auth: the cluster has no authorizer, like the compose stack; say so instead of a warning per start.
  return ['--root', dirname(configDir), '--config', basename(configDir), '--env', environment, '--allow-no-auth', 'start'];
}

/** Where the Temporal server finds PostgreSQL. */
export interface TemporalDatabase {
  host: string;
  port: number;
  user: string;
  password: string;
}

/**
 * The whole environment of the Temporal server process: exactly the variables the shared
 * configuration reads (`deploy/temporal/production.yaml` lists them), and nothing inherited that
 * could change it. Membership binds and announces 127.0.0.1, so nothing leaves the machine.
 */
export function temporalServerEnv(
  ports: ClusterPorts,
  database: TemporalDatabase,
  options: { configDir?: string; logLevel?: string } = {},
): NodeJS.ProcessEnv {
  const configDir = options.configDir ?? temporalConfigDir();
  return {
    PATH: process.env['PATH'] ?? '',
    POSTGRES_SEEDS: database.host,
    DB_PORT: String(database.port),
    POSTGRES_USER: database.user,
    POSTGRES_PWD: database.password,
    BIND_ON_IP: '127.0.0.1',
    FRONTEND_GRPC_PORT: String(ports.frontendGrpc),
    FRONTEND_HTTP_PORT: String(ports.frontendHttp),
    FRONTEND_MEMBERSHIP_PORT: String(ports.frontendMembership),
    HISTORY_GRPC_PORT: String(ports.historyGrpc),
    HISTORY_MEMBERSHIP_PORT: String(ports.historyMembership),
    MATCHING_GRPC_PORT: String(ports.matchingGrpc),
    MATCHING_MEMBERSHIP_PORT: String(ports.matchingMembership),
    WORKER_GRPC_PORT: String(ports.workerGrpc),
    WORKER_MEMBERSHIP_PORT: String(ports.workerMembership),
    DYNAMIC_CONFIG_FILE_PATH: join(configDir, 'dynamic-config.yaml'),
    LOG_LEVEL: options.logLevel ?? 'warn',
  };
}
