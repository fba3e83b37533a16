/**
 * Find, install and start the local Temporal server (DESIGN §8), and the production topology
 * of docker-compose.yml on this machine (`startProductionCluster`, `agent-sessions cluster`).
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
  TemporalCliNotFoundError,
  TemporalCliPathError,
  cachedTemporalCliPath,
  findTemporalCli,
  resolveCacheDir,
  temporalCliVersion,
  type FindTemporalCliOptions,
  type TemporalCliVersion,
} from './temporal-cli';
export { TEMPORAL_CLI_UI_VERSION, TEMPORAL_CLI_VERSION, TEMPORAL_CLI_WHEELS, TEMPORAL_SERVER_VERSION, type PinnedWheel } from './temporal-release';
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
export { CLUSTER_PORT_RANGE, clusterPorts, type ClusterPorts } from './cluster-ports';
export {
  ClusterStartAbortedError,
  ProductionClusterError,
  startProductionCluster,
  type ClusterTimings,
  type ProductionCluster,
  type ProductionClusterOptions,
} from './production-cluster';
export { findFreeClusterPort, startThrowawayCluster, type ThrowawayClusterOptions } from './throwaway-cluster';
export { ManagedProcess, type ManagedProcessOptions, type ProcessExit } from './managed-process';
export { PostgresClusterError, findPostgresBinaries, startPostgres, type PostgresBinaries, type RunningPostgres } from './postgres-cluster';
export {
  TemporalServerUnavailableError,
  cachedTemporalServerDir,
  findTemporalServerBinaries,
  type TemporalServerBinaries,
} from './temporal-server-binaries';
export { NamespaceRegistrationError, SQL_SEARCH_ATTRIBUTE_LIMITS, registerNamespace } from './temporal-namespace';
export { TEMPORAL_DATABASES, TemporalSchemaError, ensureTemporalSchemas, type SchemaChange } from './temporal-sql-schema';
export {
  PHOENIX_DEFAULT_PROJECT,
  PHOENIX_VERSION,
  PhoenixUnavailableError,
  findPhoenix,
  phoenixSpans,
  phoenixVenv,
  startPhoenix,
  type PhoenixOptions,
  type PhoenixSpan,
  type RunningPhoenix,
} from './phoenix';
