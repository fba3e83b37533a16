import { InvariantViolation } from '../todo/invariant';
import { assertCarriedAgent } from './agent-state';
import { assertCarriedState, carriedState } from './carried-state';
import { checkSessionInput, SessionInputRejection } from './session-input';

/** One open session's carried input, as `release promote` sends it to the new build's check. */
export interface CarriedSample {
  sessionId: string;
  /** The workflow id of its parent, when it is a subagent. */
  parentWorkflowId?: string;
  /** What the session would continue as new with now (its `session/carried` query). */
  input: unknown;
}

/** Why a build would refuse a session's carried input: the session, the rule and what it said. */
export interface CarriedRefusal {
  sessionId: string;
  /** `InvalidSessionInput` (the input's shape) or `InvariantViolation` (the carried state). */
  rule: 'InvalidSessionInput' | 'InvariantViolation';
  message: string;
}

/**
 * Runs the checks a new run of the session applies to its input before it trusts it (the same
 * functions, in the same order: {@link checkSessionInput}, then {@link assertCarriedState} and
 * {@link assertCarriedAgent}, then {@link carriedState}), as if the run had continued from an
 * earlier one. `undefined` when they all pass.
 */
export function checkCarriedSample(sample: CarriedSample): CarriedRefusal | undefined {
  try {
    const input = checkSessionInput(sample.input, {
      workflowId: sample.sessionId,
      parentWorkflowId: sample.parentWorkflowId,
      continuedFromRunId: 'release-check',
    });
    if (input.carried !== undefined) {
      assertCarriedState(input.carried);
      carriedState(input.carried);
    }
    if (input.carriedAgent !== undefined) assertCarriedAgent(input.carriedAgent);
    return undefined;
  } catch (error) {
    if (error instanceof SessionInputRejection) return { sessionId: sample.sessionId, rule: 'InvalidSessionInput', message: error.message };
    if (error instanceof InvariantViolation) return { sessionId: sample.sessionId, rule: 'InvariantViolation', message: error.message };
    throw error;
  }
}
