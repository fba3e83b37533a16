import { Context } from '@temporalio/activity';

/** How often a long activity heartbeats: well inside the shortest heartbeat timeout the workflow sets (10 s). */
export const HEARTBEAT_EVERY_MS = 1000;

/**
 * Runs `work` inside the current activity, heartbeating every {@link HEARTBEAT_EVERY_MS} until it
 * settles: a worker that dies mid-way is noticed within the heartbeat timeout, and a
 * cancellation (delivered with a heartbeat's answer) reaches `Context.current().cancellationSignal`.
 */
export async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const context = Context.current();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
