/**
 * The benchmark's baseline: a bare workflow that does nothing with what it receives, so that
 * whatever it costs is Temporal's own floor (server, SDK, payload conversion, workflow task
 * round trip). It mirrors the session's message shapes — an update with a small result, a
 * close update, no-op signals under the turn names, queries — without any of its logic.
 *
 * Workflow code: imports only `@temporalio/workflow`; bundled on its own by `bench/run.ts`.
 */
import { condition, defineQuery, defineSignal, defineUpdate, setHandler } from '@temporalio/workflow';

/** The workflow type other code names. */
export const BARE_WORKFLOW_TYPE = 'bareWorkflow';

/** What the no-op update answers: a small object, like a write's receipt but without work. */
export interface NoopResult {
  ok: true;
  n: number;
}

/** Takes anything (the benchmark sends it the same `{ todos }` a session gets) and ignores it. */
export const noopUpdate = defineUpdate<NoopResult, [unknown]>('noop');
/** Ends the bare workflow, as `close` ends a session. */
export const bareCloseUpdate = defineUpdate<NoopResult, []>('close');
/** No-op signals under the session's turn names, so a recorded history has the same shape. */
export const bareTurnStartSignal = defineSignal<[unknown?]>('turn/start');
export const bareTurnEndSignal = defineSignal<[unknown?]>('turn/end');
/** Answers nothing. */
export const noopQuery = defineQuery<null>('noop');
/** Answers the first argument of the last update as it came: the same bytes a `todos` query sends back. */
export const echoQuery = defineQuery<unknown>('echo');

/** Runs until `close`; every handler only counts or keeps a reference. */
export async function bareWorkflow(): Promise<NoopResult> {
  let n = 0;
  let last: unknown = null;
  let closed = false;
  setHandler(noopUpdate, (args: unknown): NoopResult => {
    n++;
    last = (args as { todos?: unknown } | undefined)?.todos ?? null;
    return { ok: true, n };
  });
  setHandler(bareCloseUpdate, (): NoopResult => {
    closed = true;
    return { ok: true, n };
  });
  setHandler(bareTurnStartSignal, () => void n++);
  setHandler(bareTurnEndSignal, () => void n++);
  setHandler(noopQuery, () => null);
  setHandler(echoQuery, () => last);
  await condition(() => closed);
  return { ok: true, n };
}
