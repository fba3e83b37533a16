/**
 * The `tools` measurement's floor for an activity: a bare workflow whose update runs one no-op
 * activity and answers, so that activity's ActivityTaskScheduled → ActivityTaskCompleted in history
 * is what Temporal alone costs for an activity round trip on the server and machine measured,
 * next to the agent loop's `runTool`.
 *
 * Workflow code: imports only `@temporalio/workflow`; bundled on its own by `bench/tools.ts`.
 */
import { allHandlersFinished, condition, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';

/** The workflow type other code names. */
export const BARE_ACTIVITY_WORKFLOW_TYPE = 'bareActivityWorkflow';

/** The one activity: does nothing and answers null. */
export interface NoopActivities {
  noop(): Promise<null>;
}

/** Runs the no-op activity once and answers how many have run. */
export const runNoopUpdate = defineUpdate<number, []>('runNoop');

const { noop } = proxyActivities<NoopActivities>({ startToCloseTimeout: '1 minute' });

/** Runs until `calls` no-op activities have run, one per `runNoop` update. */
export async function bareActivityWorkflow(calls: number): Promise<number> {
  let done = 0;
  setHandler(runNoopUpdate, async () => {
    await noop();
    return ++done;
  });
  await condition(() => done >= calls && allHandlersFinished());
  return done;
}
