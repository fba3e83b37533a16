import { InvalidSettingError } from '../client/errors';
import { booleanSetting, nonEmpty } from './setting-values';

/** The OTLP protocols the trace exporter speaks (`OTEL_EXPORTER_OTLP_PROTOCOL`). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** The samplers of the OpenTelemetry specification this project builds (`OTEL_TRACES_SAMPLER`). */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/** Which spans are kept: a sampler of the specification, with its ratio for the `traceidratio` ones. */
export interface TraceSampler {
  name: TraceSamplerName;
  /** `OTEL_TRACES_SAMPLER_ARG`: the share of traces kept, from 0 to 1 (only the ratio samplers read it; default 1). */
  ratio: number;
}

/**
 * How a process exports its traces: present only when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set (and neither `OTEL_SDK_DISABLED=true` nor
 * `OTEL_TRACES_EXPORTER=none` turns it off). Absent, no OpenTelemetry module is loaded at all.
 */
export interface TracingSettings {
  /**
   * Where spans are sent: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
   * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` appended for the HTTP protocols (as the
   * specification says), or as it is for gRPC.
   */
  endpoint: string;
  /** `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`; default `http/protobuf`. */
  protocol: OtlpProtocol;
  /** `OTEL_EXPORTER_OTLP_TRACES_HEADERS` over `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,…`, values URL-encoded): an API key of a backend, say. */
  headers: Record<string, string>;
  /** `OTEL_SERVICE_NAME`; absent, each program names itself (`agent-sessions-worker`, `agent-sessions-http`, `agent-sessions-cli`, `agent-sessions` for `up`). */
  serviceName?: string;
  /** `OTEL_RESOURCE_ATTRIBUTES` (`key=value,…`, values URL-encoded), put on every span of the process. */
  resourceAttributes: Record<string, string>;
  /** `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`) and `OTEL_TRACES_SAMPLER_ARG`. */
  sampler: TraceSampler;
  /**
   * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: model calls and tool calls carry
   * the messages, answers and arguments themselves (off by default: they may hold anything).
   */
  captureMessageContent: boolean;
}

/**
 * Reads the standard OpenTelemetry variables of the trace exporter; `exporter`, when given,
 * names the collector instead of the variables (`up --traces` gives the Phoenix it started).
 *
 * @returns `undefined` when no endpoint is set (or tracing is switched off): nothing is traced.
 * @throws InvalidSettingError naming the variable and what it accepts: an endpoint that is not an
 *   http(s) URL, a protocol, sampler or exporter outside the supported ones, a ratio outside 0..1,
 *   a `key=value` list that is not one.
 */
export function tracingSettingsFromEnv(env: NodeJS.ProcessEnv, exporter?: { endpoint: string; protocol: OtlpProtocol }): TracingSettings | undefined {
  const disabled = booleanSetting('OTEL_SDK_DISABLED', env.OTEL_SDK_DISABLED) ?? false;
  const exporterName = nonEmpty(env.OTEL_TRACES_EXPORTER)?.toLowerCase();
  if (exporterName !== undefined && exporterName !== 'otlp' && exporterName !== 'none') {
    throw new InvalidSettingError(`OTEL_TRACES_EXPORTER must be otlp or none, got ${JSON.stringify(env.OTEL_TRACES_EXPORTER)}`);
  }
  const protocol = exporter?.protocol ?? protocolSetting(env);
  if (exporter !== undefined) protocolSetting(env); // still refused when malformed
  const sampler = samplerSetting(env);
  const headers = { ...keyValues('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS), ...keyValues('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) };
  const resourceAttributes = keyValues('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES);
  const captureMessageContent = booleanSetting('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) ?? false;
  const endpoint = exporter?.endpoint ?? endpointSetting(env, protocol);
  // A collector given by a flag (`up --traces`) is used whatever the variables say.
  if (endpoint === undefined || (exporter === undefined && (disabled || exporterName === 'none'))) return undefined;
  const serviceName = nonEmpty(env.OTEL_SERVICE_NAME);
  return { endpoint, protocol, headers, ...(serviceName !== undefined ? { serviceName } : {}), resourceAttributes, sampler, captureMessageContent };
}

/**
 * `AGENT_SESSIONS_TRACE_URL`: where a person opens one trace, with `{traceId}` where its id goes
 * (`http://127.0.0.1:16686/trace/{traceId}` for Jaeger, `http://127.0.0.1:6006/redirects/traces/{traceId}` for Phoenix).
 *
 * @throws InvalidSettingError when it is not an http(s) URL holding `{traceId}`.
 */
export function traceUrlSetting(raw: string | undefined): string | undefined {
  const text = nonEmpty(raw);
  if (text === undefined) return undefined;
  if (!text.includes('{traceId}') || !isHttpUrl(text.split('{traceId}').join('0'))) {
    throw new InvalidSettingError(`AGENT_SESSIONS_TRACE_URL must be an http or https URL with {traceId} where a trace's id goes, e.g. http://127.0.0.1:16686/trace/{traceId}, got ${JSON.stringify(raw)}`);
  }
  return text;
}

function protocolSetting(env: NodeJS.ProcessEnv): OtlpProtocol {
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'] as const) {
    const value = nonEmpty(env[name]);
    if (value === undefined) continue;
    if (!(OTLP_PROTOCOLS as readonly string[]).includes(value)) {
      throw new InvalidSettingError(`${name} must be one of ${OTLP_PROTOCOLS.join(', ')}, got ${JSON.stringify(env[name])}`);
    }
    return value as OtlpProtocol;
  }
  return 'http/protobuf';
}

function endpointSetting(env: NodeJS.ProcessEnv, protocol: OtlpProtocol): string | undefined {
  const traces = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (traces !== undefined) return checkedUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces);
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (base === undefined) return undefined;
  checkedUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base);
  // The specification's rule: the signal's path is appended to the base endpoint for HTTP, never for gRPC.
  return protocol === 'grpc' ? base : `${base.replace(/\/+$/, '')}/v1/traces`;
}

function checkedUrl(name: string, value: string): string {
  if (!isHttpUrl(value)) {
    throw new InvalidSettingError(`${name} must be an http or https URL, e.g. http://127.0.0.1:4318, got ${JSON.stringify(value)}`);
  }
  return value;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function samplerSetting(env: NodeJS.ProcessEnv): TraceSampler {
  const raw = nonEmpty(env.OTEL_TRACES_SAMPLER);
  const name = raw?.toLowerCase() ?? 'parentbased_always_on';
  if (!(TRACE_SAMPLERS as readonly string[]).includes(name)) {
    throw new InvalidSettingError(`OTEL_TRACES_SAMPLER must be one of ${TRACE_SAMPLERS.join(', ')}, got ${JSON.stringify(env.OTEL_TRACES_SAMPLER)}`);
  }
  const arg = nonEmpty(env.OTEL_TRACES_SAMPLER_ARG);
  let ratio = 1;
  if (arg !== undefined) {
    ratio = /^(?:\d+\.?\d*|\.\d+)$/.test(arg) ? Number(arg) : NaN;
    if (!(ratio >= 0 && ratio <= 1)) {
      throw new InvalidSettingError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (the share of traces kept by ${name}), got ${JSON.stringify(env.OTEL_TRACES_SAMPLER_ARG)}`);
    }
  }
  return { name: name as TraceSamplerName, ratio };
}

/** A `key=value,key=value` list, values URL-decoded, as the specification writes headers and resource attributes. */
function keyValues(name: string, raw: string | undefined): Record<string, string> {
  const text = nonEmpty(raw);
  const pairs: Record<string, string> = {};
  if (text === undefined) return pairs;
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const at = entry.indexOf('=');
    const key = at > 0 ? entry.slice(0, at).trim() : '';
    let value: string | undefined;
    try {
      value = at > 0 ? decodeURIComponent(entry.slice(at + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    if (key === '' || value === undefined) {
      throw new InvalidSettingError(`${name} must be a comma-separated list of key=value (values URL-encoded), got ${JSON.stringify(entry.trim().slice(0, 80))}`);
    }
    pairs[key] = value;
  }
  return pairs;
}
