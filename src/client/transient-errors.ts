import { isGrpcServiceError } from '@temporalio/client';
import { AgentSessionsError } from './errors';

/** The gRPC status codes this library tells apart. */
export const GRPC = Object.freeze({ CANCELLED: 1, DEADLINE_EXCEEDED: 4, RESOURCE_EXHAUSTED: 8, UNAVAILABLE: 14 });

/** The gRPC status code of an error or of the first error in its cause chain that has one. */
export function grpcCode(error: unknown): number | undefined {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (isGrpcServiceError(e)) return e.code;
  }
  return undefined;
}

/**
 * Temporal buffers one query per workflow while a workflow task runs, and admits 10 updates in
 * flight per workflow; past that it answers RESOURCE_EXHAUSTED (DESIGN §9). That is a reason to
 * ask again shortly, never an error for the caller: retry with a short, growing, jittered pause
 * (at most a second each). Only for calls that are safe to repeat: queries, and updates that
 * carry their update id.
 */
export async function withBusyRetry<T>(ask: () => Promise<T>, attempts = 12): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (error) {
      if (attempt >= attempts || !isBusy(error)) throw error;
      const pause = Math.min(1000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** Whether an error is Temporal's "too many queries / updates in flight" busy answer (RESOURCE_EXHAUSTED). */
export function isBusy(error: unknown): boolean {
  return grpcCode(error) === GRPC.RESOURCE_EXHAUSTED;
}

/**
 * Whether an error means Temporal could not be reached or did not answer in time: the
 * library's {@link TemporalUnavailableError}, or a raw gRPC UNAVAILABLE or DEADLINE_EXCEEDED
 * from a call made on the connection directly.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof AgentSessionsError) return error.code === 'temporal-unavailable';
  const code = grpcCode(error);
  return code === GRPC.UNAVAILABLE || code === GRPC.DEADLINE_EXCEEDED;
}
