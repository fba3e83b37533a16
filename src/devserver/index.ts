/**
 * Find, install and start the local Temporal server (DESIGN §8).
 *
 * @example
 * import { isServing, startDevServer } from './devserver';
 *
 * if (!(await isServing('127.0.0.1:7233'))) {
 *   const server = await startDevServer();
 *   process.once('SIGINT', () => void server.stop());
 * }
 */
export {
  TEMPORAL_CLI_MODULE,
  TEMPORAL_CLI_VERSION,
  MIN_GO_VERSION,
  TemporalCliNotFoundError,
  TemporalCliPathError,
  cachedTemporalCliPath,
  findTemporalCli,
  resolveCacheDir,
  type FindTemporalCliOptions,
} from './temporal-cli';
export {
  DevServerStartError,
  DevServerUnavailableError,
  defaultDataDir,
  findFreePort,
  isServing,
  startDevServer,
  type DevServerHandle,
  type DevServerOptions,
  type SearchAttributeTypeName,
} from './dev-server';
