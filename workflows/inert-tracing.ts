/**
 * The workflow interceptors of a worker that does not trace: Temporal's OpenTelemetry workflow
 * interceptors (`@temporalio/interceptors-opentelemetry` 1.24.0, `lib/workflow/index.js`) with
 * every span taken out and every asynchronous step and SDK-flag check left in, in the same
 * order. Replay depends on it: those steps decide where an update's completion, an activity's
 * result or the workflow's end fall among the commands of a workflow task, so a history written by
 * a worker that traces replays on one that does not only if both take the same steps (and vice
 * versa). The SDK's flags are asked exactly where it asks them, so both record the same flags.
 *
 * Nothing of OpenTelemetry is evaluated here: a new workflow instance of an untraced worker does
 * not pay for its modules. Keep it step for step with the SDK's file when the SDK is upgraded;
 * the replay tests across tracing on and off (test/integration/tracing-replay.test.ts) catch a
 * step out of place on the paths a session takes.
 */
import type {
  ActivityInput,
  ContinueAsNewInput,
  LocalActivityInput,
  Next,
  QueryInput,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  StartNexusOperationInput,
  StartNexusOperationOutput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { SdkFlags } from '@temporalio/workflow/lib/flags';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';
import type { Headers } from '@temporalio/common';
import { TRACE_HEADER } from './turn-trace';

const has = (flag: (typeof SdkFlags)[keyof typeof SdkFlags]): boolean => getActivator().hasFlag(flag);

/** The SDK's `extractContextFromHeaders`, as far as its steps go: a context exists when the header does. */
const hasContext = (headers: Headers): boolean => headers[TRACE_HEADER] !== undefined;

/**
 * The SDK's `instrument` (lib/instrumentation.js) without the span: `context.with` and
 * `startActiveSpan` call their callback at once, `wrapWithSpan` awaits `fn`.
 */
export async function inertInstrument<T>(withContext: boolean, fn: () => Promise<T> | T): Promise<T> {
  if (withContext) return await now(async () => await now(async () => await wrap(fn)));
  return await now(async () => await wrap(fn));
}

/** What `context.with` and `startActiveSpan` do with their callback, timing-wise: call it. */
function now<T>(callback: () => T): T {
  return callback();
}

async function wrap<T>(fn: () => Promise<T> | T): Promise<T> {
  const ret = await fn();
  return ret;
}

/** `OpenTelemetryInboundInterceptor`, inert. */
export class InertInboundInterceptor implements WorkflowInboundCallsInterceptor {
  async execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const context = hasContext(input.headers);
    if (!has(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
    return await inertInstrument(context, () => next(input));
  }

  async handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    if (!has(SdkFlags.OpenTelemetryInterceptorsTracesInboundSignals)) return next(input);
    const context = hasContext(input.headers);
    if (!has(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
    return await inertInstrument(context, () => next(input));
  }

  async handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    if (!has(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    const context = hasContext(input.headers);
    return await inertInstrument(context, () => next(input));
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    if (!has(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    next(input);
  }

  async handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>): Promise<unknown> {
    if (!has(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    const context = hasContext(input.headers);
    return await inertInstrument(context, () => next(input));
  }
}

/** `OpenTelemetryOutboundInterceptor`, inert (its `headersWithContext` is left out: no header is sent). */
export class InertOutboundInterceptor implements WorkflowOutboundCallsInterceptor {
  async scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    return await inertInstrument(false, async () => {
      if (!has(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
      return next(input);
    });
  }

  async scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>): Promise<unknown> {
    if (!has(SdkFlags.OpenTelemetryInterceptorsTracesLocalActivities)) return next(input);
    return await inertInstrument(false, async () => {
      if (!has(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
      return next(input);
    });
  }

  async startNexusOperation(input: StartNexusOperationInput, next: Next<WorkflowOutboundCallsInterceptor, 'startNexusOperation'>): Promise<StartNexusOperationOutput> {
    if (!has(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    return await inertInstrument(false, async () => await next(input));
  }

  async startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ): Promise<[Promise<string>, Promise<unknown>]> {
    return await inertInstrument(false, async () => {
      if (!has(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
      return next(input);
    });
  }

  async continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>): Promise<never> {
    return await inertInstrument(false, async () => {
      if (!has(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
      return next(input);
    });
  }

  async signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>): Promise<void> {
    return await inertInstrument(false, async () => {
      if (!has(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
      return next(input);
    });
  }
}
