/**
 * A workflow interceptor module that only the fork's replay bundles (never a worker's): at the
 * end of every activation it hands the session's state and its agent's to the `forkCapture`
 * sink, with the workflow info of that activation. Replaying a history cut at a fork point then
 * leaves, as its last call, the state the session's own code had there.
 */
import { proxySinks, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { observedSession, type ObservedSession } from './session-observer';

/** The sink the fork's replay worker registers (with `callDuringReplay`). */
export interface ForkCaptureSinks extends Sinks {
  forkCapture: { state(observed: ObservedSession): void };
}

const { forkCapture } = proxySinks<ForkCaptureSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  internals: [
    {
      concludeActivation(input, next) {
        const observed = observedSession();
        if (observed !== undefined) forkCapture.state(observed);
        return next(input);
      },
    },
  ],
});
