import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';

// A session worker has no activities or Nexus services by design; saying so on every start
// is noise, not a warning.
const EXPECTED = /^No (activities|Nexus services) registered/;

/**
 * Installs Temporal's runtime with a logger that prints `level` and above to stderr, one line
 * per entry (the native core's own lines at the same level), without the SDK's start-up notices that are
 * expected here. Call before the first
 * worker or replay; a second call is ignored.
 */
export function installRuntimeLogging(level: LogLevel = 'WARN'): void {
  const logger = new DefaultLogger(level, (entry: LogEntry) => {
    if (EXPECTED.test(entry.message)) return;
    const meta = entry.meta !== undefined && Object.keys(entry.meta).length > 0 ? ` ${JSON.stringify(entry.meta)}` : '';
    process.stderr.write(`[temporal ${entry.level}] ${entry.message}${meta}\n`);
  });
  try {
    // The native core writes its own lines; give it the same level so one setting governs every
    // line. (Forwarding them to the logger instead keeps a short-lived CLI process from exiting.)
    Runtime.install({ logger, telemetryOptions: { logging: { console: {}, filter: { core: level, other: level } } } });
  } catch {
    // The runtime exists already (installed earlier in this process): keep it.
  }
}
