export { AGENT_DEFAULTS, MIN_CONTEXT_CHARS, type AgentSettings } from './agent-settings';
export { HTTP_DEFAULTS, type HttpSettings } from './http-settings';
export { METRICS_DEFAULTS, type MetricsSettings } from './metrics-settings';
export { defaultDataDir, resolveCacheDir, userCacheDir, type PathSettings } from './paths';
export { STREAM_STORE_DEFAULTS, type StreamStoreConfig } from './stream-store-settings';
export { POLICY_ENV, POLICY_FLAG, requirePolicy } from './policy-setting';
export { loadSettings, type Settings, type SettingsFlags, type TemporalSettings } from './settings';
export { connectionOptions, resolveTemporalConfig, TEMPORAL_DEFAULTS, type TemporalConfig } from './temporal-config';
export { OTLP_PROTOCOLS, TRACE_SAMPLERS, type OtlpProtocol, type TraceSampler, type TraceSamplerName, type TracingSettings } from './tracing-settings';
