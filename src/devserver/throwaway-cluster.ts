import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLUSTER_PORT_RANGE, clusterPorts, workerMetricsPort } from './cluster-ports';
import { bindProblem } from './dev-server';
import { startProductionCluster, type ProductionCluster, type ProductionClusterOptions } from './production-cluster';

/**
 * Finds a frontend port whose derived cluster ports (PostgreSQL, membership, services, the
 * metrics of `workers` workers) are all free right now, chosen at random from 10000 up to {@link CLUSTER_PORT_RANGE}'s maximum: below
 * the ephemeral ports the operating system hands out (which `findFreePort` returns, and which
 * Temporal's membership table could not store). Meant for tests and benchmarks; another process
 * may take a port before it is used.
 *
 * @throws {Error} no such port was found in 100 tries.
 */
export async function findFreeClusterPort(workers = 2): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (CLUSTER_PORT_RANGE.max - 10_000));
    const metrics = Array.from({ length: workers }, (_, i) => workerMetricsPort(port, i));
    const problems = await Promise.all([...Object.values(clusterPorts(port)), ...metrics].map((p) => bindProblem('127.0.0.1', p)));
    if (problems.every((problem) => problem === undefined)) return port;
  }
  throw new Error('found no frontend port whose derived cluster ports are all free');
}

/** Options of {@link startThrowawayCluster}: those of {@link startProductionCluster} but the port and the data folder, which it picks. */
export type ThrowawayClusterOptions = Omit<ProductionClusterOptions, 'port' | 'dataDir'>;

/**
 * Starts the production topology ({@link startProductionCluster}) on free loopback ports with its
 * data in a fresh temporary folder, for a test run or a benchmark; its `stop()` also removes the
 * folder. The folder is made enterable by others, because as root PostgreSQL runs as the
 * `postgres` user, which must reach its data directory inside it (PostgreSQL keeps that
 * directory itself private).
 *
 * @throws what {@link startProductionCluster} throws; the folder is removed again.
 */
export async function startThrowawayCluster(options: ThrowawayClusterOptions): Promise<ProductionCluster> {
  const folder = await mkdtemp(join(tmpdir(), 'agent-sessions-cluster-'));
  const remove = (): Promise<void> => rm(folder, { recursive: true, force: true });
  let cluster: ProductionCluster;
  try {
    await chmod(folder, 0o755);
    cluster = await startProductionCluster({ ...options, port: await findFreeClusterPort(options.workers ?? 2), dataDir: join(folder, 'data') });
  } catch (error) {
    await remove();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    ...cluster,
    processes: () => cluster.processes(),
    stop: () => (stopping ??= cluster.stop().finally(remove)),
  };
}
