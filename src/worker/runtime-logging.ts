import { IllegalStateError } from '@temporalio/common';
import { DefaultLogger, Runtime, type LogEntry, type LogLevel, type TelemetryOptions } from '@temporalio/worker';

// A session worker has no activities or Nexus services by design; saying so on every start
// is noise, not a warning.
const EXPECTED = /^No (activities|Nexus services) registered/;

/** What the runtime exports beside its log lines. */
export interface RuntimeTelemetry {
  /**
   * `host:port` where Temporal's native core serves its own metrics (`temporal_*`) in
   * Prometheus' text format, at `/metrics`. `agent-sessions worker --metrics-port` gives it a
   * loopback port and serves it merged with the activities' metrics (see `worker-metrics.ts`).
   */
  prometheusAddress?: string;
}

/**
 * Installs Temporal's runtime with a logger that prints `level` and above to stderr, one line
 * per entry (the native core's own lines at the same level), without the SDK's start-up notices that are
 * expected here; with `telemetry.prometheusAddress`, the core's metrics are served there too.
 * Call before the first worker or replay: there is one runtime per process. A second call is
 * ignored, unless it asks for metrics the installed runtime does not serve.
 *
 * @throws Error when `telemetry.prometheusAddress` cannot be bound, or when the runtime was
 *   installed before without it (the metrics could then never be served).
 */
export function installRuntimeLogging(level: LogLevel = 'WARN', telemetry: RuntimeTelemetry = {}): void {
  const logger = new DefaultLogger(level, (entry: LogEntry) => {
    if (EXPECTED.test(entry.message)) return;
    const meta = entry.meta !== undefined && Object.keys(entry.meta).length > 0 ? ` ${JSON.stringify(entry.meta)}` : '';
    process.stderr.write(`[temporal ${entry.level}] ${entry.message}${meta}\n`);
  });
  // The native core writes its own lines; give it the same level so one setting governs every
  // line. (Forwarding them to the logger instead keeps a short-lived CLI process from exiting.)
  const telemetryOptions: TelemetryOptions = { logging: { console: {}, filter: { core: level, other: level } } };
  if (telemetry.prometheusAddress !== undefined) telemetryOptions.metrics = { prometheus: { bindAddress: telemetry.prometheusAddress } };
  try {
    Runtime.install({ logger, telemetryOptions });
  } catch (error) {
    if (!(error instanceof IllegalStateError)) {
      if (telemetry.prometheusAddress === undefined) throw error;
      throw new Error(`Temporal's metrics cannot be served at ${telemetry.prometheusAddress}: ${(error as Error).message}`, { cause: error });
    }
    // The runtime exists already (installed earlier in this process): keep it, unless it lacks the metrics asked for.
    if (telemetry.prometheusAddress !== undefined) {
      throw new Error(
        `Temporal's runtime was installed in this process before, without metrics: install it with the metrics address before the first worker or replay (${error.message})`,
        { cause: error },
      );
    }
  }
}
