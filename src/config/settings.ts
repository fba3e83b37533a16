import { CONTINUE_AS_NEW_AFTER_RANGE } from '../session';
import type { TodoPolicy } from '../todo';
import { agentSettingsFromEnv, type AgentSettings } from './agent-settings';
import { HIDDEN, hideSecrets } from './hidden-secrets';
import { withoutPassword } from '../streams/postgres-stream-store';
import { httpSettingsFromEnv, type HttpSettings } from './http-settings';
import { metricsSettingsFromEnv, type MetricsSettings } from './metrics-settings';
import { pathSettingsFromEnv, type PathSettings } from './paths';
import { policySetting } from './policy-setting';
import { releaseSettingsFromEnv, type ReleaseSettings } from './release-settings';
import { streamStoreSettingsFromEnv, type StreamStoreConfig } from './stream-store-settings';
import { integerSetting, nonEmpty } from './setting-values';
import { temporalConfigFromEnv, type TemporalConfig } from './temporal-config';
import { traceUrlSetting, tracingSettingsFromEnv, type TracingSettings } from './tracing-settings';

/** The connection settings, and whether the environment named the frontend. */
export interface TemporalSettings extends TemporalConfig {
  /**
   * `true` when `TEMPORAL_ADDRESS` named the frontend; `false` when `address` is the default,
   * which is when `agent-sessions up` may start a local server.
   */
  addressGiven: boolean;
}

/**
 * Every setting of agent-sessions, read once from the environment and the command's flags by
 * {@link loadSettings}: the one place a program turns `process.env` into typed values. The
 * library itself reads none of it; a program passes the parts it needs as options.
 */
export interface Settings {
  temporal: TemporalSettings;
  /** The parallel policy; absent when neither the flag nor `ALLOW_PARALLEL_IN_PROGRESS` gives it (it has no default). */
  policy?: TodoPolicy;
  /** `AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER`: applied events per run for the sessions a client creates (absent: the workflow's 500). */
  continueAsNewAfter?: number;
  http: HttpSettings;
  /** The worker's metrics endpoint. */
  metrics: MetricsSettings;
  paths: PathSettings;
  agent: AgentSettings;
  /** Where the model's streamed words are kept: the worker writes there, the HTTP service and `chat` read there. */
  streams: StreamStoreConfig;
  /** The worker's deployment version, and the deployment `release` changes. */
  release: ReleaseSettings;
  /** The standard `OTEL_*` variables of the trace exporter; absent when no OTLP endpoint is set (nothing is traced or loaded). */
  tracing?: TracingSettings;
  /** `AGENT_SESSIONS_TRACE_URL`: where one trace opens, `{traceId}` standing for its id (the dashboard links each turn there). */
  traceUrl?: string;
}

/** The flags that override a setting, as the command line gives them. */
export interface SettingsFlags {
  /** `--allow-parallel-in-progress`, as typed: checked here and named by the flag when malformed. */
  allowParallelInProgress: string;
  /** `--host` of `serve`. */
  httpHost: string;
  /** `--port` of `serve`, `--http-port` of `up` and `cluster`. */
  httpPort: number;
  /** `--deployment` of `worker`, `up` and `release`. */
  deployment: string;
  /** `--build-id` of `worker` and `up`. */
  buildId: string;
  /** `--metrics-port` of `worker` and `up`, as typed: checked here and named by the flag when malformed. */
  metricsPort: string;
  /** `--metrics-host` of `worker`. */
  metricsHost: string;
  /** The OTLP/HTTP base URL of the collector `up --traces` started: traces go there whatever the variables say. */
  tracesEndpoint: string;
  /** `--tools` of `worker`, `up` and `cluster`: the user's tools module (over `AGENT_SESSIONS_TOOLS`). */
  tools: string;
}

/**
 * Turns the environment (and the command's flags, which override it) into one typed, validated
 * {@link Settings} object. Unset and empty variables take their documented defaults (README,
 * "Configuration"); no file is written and no process started. TLS files are read here, so a
 * path that cannot be read is refused before anything starts.
 *
 * @throws InvalidSettingError whose message names the variable (or flag) with a bad value and
 *   what it may be, e.g. `AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER must be an integer from 10 to 2000
 *   (applied events per run), got "abc"`.
 * @example
 * const settings = loadSettings(process.env);
 * const sessions = await SessionClient.connect(settings.temporal);
 */
export function loadSettings(env: NodeJS.ProcessEnv, flags: Partial<SettingsFlags> = {}, cwd: string = process.cwd()): Settings {
  const temporal: TemporalSettings = { ...temporalConfigFromEnv(env), addressGiven: nonEmpty(env.TEMPORAL_ADDRESS) !== undefined };
  const policy = policySetting(flags.allowParallelInProgress, env);
  const continueAsNewAfter = integerSetting(
    'AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER',
    env.AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER,
    CONTINUE_AS_NEW_AFTER_RANGE,
    'applied events per run',
  );
  const http = httpSettingsFromEnv(env, {
    ...(flags.httpHost !== undefined ? { host: flags.httpHost } : {}),
    ...(flags.httpPort !== undefined ? { port: flags.httpPort } : {}),
  });
  const tracing = tracingSettingsFromEnv(
    env,
    flags.tracesEndpoint !== undefined ? { endpoint: `${flags.tracesEndpoint.replace(/\/+$/, '')}/v1/traces`, protocol: 'http/protobuf' } : undefined,
  );
  const traceUrl = traceUrlSetting(env.AGENT_SESSIONS_TRACE_URL);
  const paths = pathSettingsFromEnv(env, cwd);
  return {
    temporal: hideSecrets(temporal, showTemporal),
    ...(policy !== undefined ? { policy } : {}),
    ...(continueAsNewAfter !== undefined ? { continueAsNewAfter } : {}),
    http: hideSecrets(http, ({ token, ...rest }) => ({ ...rest, ...(token !== undefined ? { token: HIDDEN } : {}) })),
    metrics: metricsSettingsFromEnv(env, {
      ...(flags.metricsPort !== undefined ? { port: flags.metricsPort } : {}),
      ...(flags.metricsHost !== undefined ? { host: flags.metricsHost } : {}),
    }),
    paths,
    streams: hideSecrets(streamStoreSettingsFromEnv(env, paths.dataDir, cwd), ({ location, ...rest }) => ({ ...rest, location: withoutPassword(location) })),
    agent: agentSettingsFromEnv(flags.tools !== undefined ? { ...env, AGENT_SESSIONS_TOOLS: flags.tools } : env, cwd),
    release: releaseSettingsFromEnv(env, temporal.taskQueue, {
      ...(flags.deployment !== undefined ? { deployment: flags.deployment } : {}),
      ...(flags.buildId !== undefined ? { buildId: flags.buildId } : {}),
    }),
    ...(tracing !== undefined ? { tracing: hideSecrets(tracing, ({ headers, ...rest }) => ({ ...rest, headers: Object.fromEntries(Object.keys(headers).map((key) => [key, HIDDEN])) })) } : {}),
    ...(traceUrl !== undefined ? { traceUrl } : {}),
  };
}

/** The connection settings without the API key or the TLS files' bytes (a private key among them). */
function showTemporal({ apiKey, tls, ...rest }: TemporalSettings): Record<string, unknown> {
  return {
    ...rest,
    ...(apiKey !== undefined ? { apiKey: HIDDEN } : {}),
    ...(tls === undefined || typeof tls === 'boolean'
      ? { ...(tls !== undefined ? { tls } : {}) }
      : {
          tls: {
            ...(tls.clientCertPair !== undefined ? { clientCertPair: HIDDEN } : {}),
            ...(tls.serverRootCACertificate !== undefined ? { serverRootCACertificate: `${tls.serverRootCACertificate.length} bytes` } : {}),
            ...(tls.serverNameOverride !== undefined ? { serverNameOverride: tls.serverNameOverride } : {}),
          },
        }),
  };
}
