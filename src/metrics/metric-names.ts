/**
 * The names, labels and histogram buckets of agent-sessions' own Prometheus metrics: a contract
 * dashboards and alerts rely on (docs/observability.md, "Metrics"). Temporal's SDK metrics
 * (`temporal_*`) are the worker runtime's, not listed here.
 */
export const METRIC_NAMES = Object.freeze({
  /** `{result="accepted"}` or `{result="rejected",rule}`: `todo_write` answers, each update id once per result. */
  todoWrites: 'agent_sessions_todo_write_total',
  /** `{model,outcome}`: attempts of the `callModel` activity. */
  modelCalls: 'agent_sessions_model_calls_total',
  /** `{model,kind="input|output"}`: the tokens the endpoint reported for the calls that answered. */
  modelTokens: 'agent_sessions_model_tokens_total',
  /** `{model,outcome}`: how long each `callModel` attempt took. */
  modelCallDuration: 'agent_sessions_model_call_duration_seconds',
  /** `{outcome}`: agent turns that ended, by the reason they ended. */
  turns: 'agent_sessions_turns_total',
  /** `{outcome}`: from the message leaving the queue to the turn's end, as the session's history dates them. */
  turnDuration: 'agent_sessions_turn_duration_seconds',
  /** `{route,method,status}`: the HTTP service's requests; `route` is the route's template, never the raw path. */
  httpRequestDuration: 'agent_sessions_http_request_duration_seconds',
});

/** One of {@link METRIC_NAMES}. */
export type MetricName = (typeof METRIC_NAMES)[keyof typeof METRIC_NAMES];

/** A model call's bounds: a quick tool-call answer to a long reasoning answer (the activity allows 10 minutes). */
export const MODEL_CALL_BUCKETS = Object.freeze([0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600]);

/** A turn's bounds: one quick answer to an hour of tool calls and subagents. */
export const TURN_BUCKETS = Object.freeze([0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600]);

/** An HTTP request's bounds: a cached read to a write that waits for Temporal's 10 s limit. */
export const HTTP_REQUEST_BUCKETS = Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]);

/** The `route` of a request that no route matched (a 404, or a refusal of a path the service does not serve). */
export const UNMATCHED_ROUTE = 'unmatched';
