import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { AgentLoopMetrics } from '../src/metrics';
import type { AgentActivities } from './agent-contract';

type CallModel = AgentActivities['callModel'];

/**
 * `callModel` that counts each attempt into `metrics`: its outcome (`ok`, `cancelled`, the
 * failure's type such as `ModelUnavailable`, or `error`), its time, and for an answer the tokens
 * the endpoint reported. Each attempt is one request to the endpoint, so each one counts, retries
 * included; the workflow code that asked for it never counts.
 */
export function meteredModelCall(call: CallModel, metrics: AgentLoopMetrics): CallModel {
  return async (input) => {
    const began = performance.now();
    const seconds = (): number => (performance.now() - began) / 1000;
    try {
      const answer = await call(input);
      metrics.modelCall({
        model: input.model,
        outcome: 'ok',
        seconds: seconds(),
        tokens: { input: answer.usage.prompt_tokens, output: answer.usage.completion_tokens },
      });
      return answer;
    } catch (error) {
      metrics.modelCall({ model: input.model, outcome: outcomeOf(error), seconds: seconds() });
      throw error;
    }
  };
}

/** The `outcome` label of a failed call. */
function outcomeOf(error: unknown): string {
  if (error instanceof CancelledFailure) return 'cancelled';
  if (error instanceof ApplicationFailure && typeof error.type === 'string' && error.type !== '') return error.type;
  return 'error';
}
