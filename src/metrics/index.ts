/**
 * agent-sessions' own Prometheus metrics (prom-client), shared by the worker and the HTTP
 * service: each process counts what it does itself, into a registry it serves.
 */
export { AgentLoopMetrics, type ModelCallRecord } from './agent-loop-metrics';
export { HttpServiceMetrics } from './http-service-metrics';
export { HTTP_REQUEST_BUCKETS, METRIC_NAMES, MODEL_CALL_BUCKETS, TURN_BUCKETS, UNMATCHED_ROUTE, type MetricName } from './metric-names';
export { TodoWriteMetrics } from './todo-write-metrics';
