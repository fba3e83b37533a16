/**
 * Every loopback port of the production topology that `agent-sessions cluster` runs, derived
 * from the Temporal frontend's gRPC port so that one number places the whole cluster. With the
 * default 7233 the Temporal services get exactly the ports of Temporal's own configuration (and
 * of the `temporalio/server` container in docker-compose.yml); a second cluster, or a dev server,
 * runs beside it by choosing another `--port`.
 */
export interface ClusterPorts {
  /** Frontend gRPC: what `TEMPORAL_ADDRESS` names. */
  frontendGrpc: number;
  /** Frontend HTTP API (Temporal's HTTP/JSON gateway). */
  frontendHttp: number;
  frontendMembership: number;
  historyGrpc: number;
  historyMembership: number;
  matchingGrpc: number;
  matchingMembership: number;
  workerGrpc: number;
  workerMembership: number;
  /** PostgreSQL. */
  postgres: number;
}

/** How far below the frontend port PostgreSQL listens: 7233 → 5433, beside (not on) a system PostgreSQL's 5432. */
const POSTGRES_OFFSET = -1800;
/** How far below the gRPC ports the membership (ringpop) ports are: 7233 → 6933, as in Temporal's configuration. */
const MEMBERSHIP_OFFSET = -300;

/**
 * The highest membership port Temporal can record: its SQL schema keeps each host's membership
 * port in `cluster_membership.rpc_port`, a SMALLINT, and a server given a larger one dies at start
 * ("value … is out of range for type smallint").
 */
const MAX_MEMBERSHIP_PORT = 32767;

/**
 * The lowest and highest `--port`: every derived port must be unprivileged (≥ 1024, so PostgreSQL
 * at port − 1800 sets the floor) and every membership port must fit a SMALLINT (≤ 32767, so the
 * worker service's port − 294 sets the ceiling).
 */
export const CLUSTER_PORT_RANGE = Object.freeze({ min: 1024 - POSTGRES_OFFSET, max: MAX_MEMBERSHIP_PORT - (6 + MEMBERSHIP_OFFSET) });

/**
 * The ports of a cluster whose frontend listens on `port`:
 *
 * | service | gRPC | membership |
 * |---|---|---|
 * | frontend | port (7233) | port − 300 (6933) |
 * | history | port + 1 (7234) | port − 299 (6934) |
 * | matching | port + 2 (7235) | port − 298 (6935) |
 * | worker | port + 6 (7239) | port − 294 (6939) |
 *
 * plus the frontend's HTTP API on port + 10 (7243) and PostgreSQL on port − 1800 (5433).
 *
 * @throws {RangeError} `port` is not an integer in {@link CLUSTER_PORT_RANGE}.
 */
export function clusterPorts(port: number): ClusterPorts {
  if (!Number.isInteger(port) || port < CLUSTER_PORT_RANGE.min || port > CLUSTER_PORT_RANGE.max) {
    throw new RangeError(
      `the cluster's frontend port must be an integer from ${CLUSTER_PORT_RANGE.min} to ${CLUSTER_PORT_RANGE.max}, got ${port}: ` +
        `PostgreSQL listens on port - ${-POSTGRES_OFFSET}, and the membership ports (port - ${-MEMBERSHIP_OFFSET} to port - 294) ` +
        `must be at most ${MAX_MEMBERSHIP_PORT}, the largest Temporal's SQL schema can store`,
    );
  }
  return {
    frontendGrpc: port,
    frontendHttp: port + 10,
    frontendMembership: port + MEMBERSHIP_OFFSET,
    historyGrpc: port + 1,
    historyMembership: port + 1 + MEMBERSHIP_OFFSET,
    matchingGrpc: port + 2,
    matchingMembership: port + 2 + MEMBERSHIP_OFFSET,
    workerGrpc: port + 6,
    workerMembership: port + 6 + MEMBERSHIP_OFFSET,
    postgres: port + POSTGRES_OFFSET,
  };
}

/** How far above the frontend port the first worker's metrics endpoint is: 7233 → 7253, 7254, … */
const WORKER_METRICS_OFFSET = 20;

/**
 * The metrics port (`--metrics-port`) of worker `index` (from 0) of a cluster whose frontend
 * listens on `port`: port + 20 + index, so 7253 and 7254 for the default two workers; above
 * every other port of the cluster (port + 10 at most) and below the next cluster's membership
 * ports when clusters are 100 apart.
 */
export function workerMetricsPort(port: number, index: number): number {
  return port + WORKER_METRICS_OFFSET + index;
}
