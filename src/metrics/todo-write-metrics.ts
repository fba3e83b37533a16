import type { Counter, Registry } from './prom-client';
import { SessionClosedError, TodoRejectedError } from '../client/errors';
import { CountedOnce } from './counted-once';
import { METRIC_NAMES } from './metric-names';
import { counterOn } from './registered-metric';

/**
 * Counts `todo_write` answers into `agent_sessions_todo_write_total`: `{result="accepted"}` (no
 * `rule` label, which PromQL reads as `rule=""`) or `{result="rejected",rule="<first broken
 * rule>"}`. Only what the session answered is counted: a write whose answer never came (an
 * outcome-unknown, no worker) is not, and sending it again under its update id is then counted
 * once, by the answer that came. Each update id is counted once per result, so an answer given
 * twice for one write (a retried activity, a client resending its `Idempotency-Key`) counts once;
 * the server dedupes the write itself by the same id.
 */
export class TodoWriteMetrics {
  private readonly counter: Counter<'result' | 'rule'>;
  private readonly counted = new CountedOnce();

  constructor(registry: Registry) {
    this.counter = counterOn(registry, METRIC_NAMES.todoWrites, 'todo_write answers: accepted, or rejected by the first broken rule', ['result', 'rule']);
  }

  /**
   * Runs `write` (a `todoWrite` sent under `updateId`) and counts its answer; the answer (or the
   * error) is passed on unchanged.
   */
  async count<T>(updateId: string, write: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await write();
    } catch (error) {
      const rule = rejectionRule(error);
      if (rule !== undefined && this.counted.first(`rejected:${updateId}`)) this.counter.inc({ result: 'rejected', rule });
      throw error;
    }
    if (this.counted.first(`accepted:${updateId}`)) this.counter.inc({ result: 'accepted' });
    return result;
  }
}

/** The rule a refusal names, or undefined for an error that is no answer of the session's (unreachable, timed out). */
function rejectionRule(error: unknown): string | undefined {
  if (error instanceof TodoRejectedError) return error.rule;
  // A closed session refuses every write: the same rule its validator names.
  if (error instanceof SessionClosedError) return 'session-closed';
  return undefined;
}
