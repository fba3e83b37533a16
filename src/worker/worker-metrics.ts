import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LogLevel } from '@temporalio/worker';
import { Registry } from '../metrics/prom-client';
import { InvalidSettingError } from '../client/errors';
import { findFreePort } from '../devserver/free-port';
import { installRuntimeLogging } from './runtime-logging';

/** Options of {@link startWorkerMetrics}. */
export interface WorkerMetricsOptions {
  /** The address to bind (`--metrics-host`; 127.0.0.1 unless told). */
  host?: string;
  /** The port (`--metrics-port`); 0 picks a free one. */
  port: number;
  /** The level of the runtime's log lines (as {@link installRuntimeLogging} takes it). */
  logLevel?: LogLevel;
  /** The registry the worker's activities count into (give it to `createWorker`); a new one unless given. */
  registry?: Registry;
}

/** A running metrics endpoint of a worker process. */
export interface WorkerMetricsEndpoint {
  /** `http://host:port/metrics` */
  readonly url: string;
  /** Where the activities count: pass it to `createWorker({ metrics })`. */
  readonly registry: Registry;
  /** Stops answering. */
  close(): Promise<void>;
}

/**
 * Serves one worker process's metrics on one endpoint, `GET /metrics`: Temporal's SDK metrics
 * (`temporal_*`: task latencies, failures, slots, polls) and the agent loop's own (`registry`),
 * in Prometheus' text format. Installs the process's Temporal runtime (as
 * {@link installRuntimeLogging} does, same log lines) with the native core's Prometheus exporter
 * on a loopback port of its own, which each scrape reads and joins with `registry`'s text; so it
 * must run before the first worker of the process.
 *
 * Why two sources behind one endpoint rather than the core's meter for ours: one library
 * (prom-client) defines each metric of ours once, for the worker and for the HTTP service, which
 * never loads the native core; the core's exporter would drop our help texts; and a library
 * user can count into a registry of their own without the core's exporter.
 *
 * @throws InvalidSettingError naming `--metrics-port` when the port cannot be bound.
 * @throws Error when the runtime was already installed without metrics.
 */
export async function startWorkerMetrics(options: WorkerMetricsOptions): Promise<WorkerMetricsEndpoint> {
  const host = options.host ?? '127.0.0.1';
  const registry = options.registry ?? new Registry();
  // The core's exporter answers on loopback only; nothing but this process reads it.
  const core = `127.0.0.1:${await findFreePort()}`;
  const server = createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('this endpoint serves GET /metrics only\n');
      return;
    }
    scrape(core, registry).then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (error: Error) => res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${error.message}\n`),
    );
  });
  // Ours first: a port that is taken is refused before anything else starts.
  const bound = await listen(server, options.port, host);
  try {
    installRuntimeLogging(options.logLevel, { prometheusAddress: core });
  } catch (error) {
    server.close();
    throw error;
  }
  const shownHost = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shownHost}:${bound.port}/metrics`,
    registry,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** The core's metrics followed by the registry's, as one text. */
async function scrape(core: string, registry: Registry): Promise<string> {
  const [temporal, ours] = await Promise.all([coreMetrics(core), registry.metrics()]);
  return `${temporal.endsWith('\n') || temporal === '' ? temporal : `${temporal}\n`}${ours}`;
}

async function coreMetrics(core: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`http://${core}/metrics`, { signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    throw new Error(`Temporal's metrics exporter at ${core} did not answer: ${(error as Error).message}`, { cause: error });
  }
  if (!response.ok) throw new Error(`Temporal's metrics exporter at ${core} answered HTTP ${response.status}`);
  return response.text();
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new InvalidSettingError(
          `--metrics-port ${port} cannot be served on ${host} (${error.code ?? error.message}): choose another port, or 0 for any free one`,
        ),
      ),
    );
    server.listen({ port, host }, () => resolve(server.address() as AddressInfo));
  });
}
