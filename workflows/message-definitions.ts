/**
 * The definitions of the session's messages, made as `@temporalio/workflow`'s `defineUpdate`,
 * `defineSignal` and `defineQuery` make them: a plain `{ type, name }`, typed by the SDK's own
 * definition types. Made here so that a client that only names the messages (the CLI's
 * `todos`, a script) does not evaluate the SDK's workflow package to get them: 7 ms of a
 * short command's start-up. A unit test holds each one equal to the SDK's.
 */
import type { QueryDefinition, SignalDefinition, UpdateDefinition } from '@temporalio/common';

/* eslint-disable @typescript-eslint/no-explicit-any -- the SDK's own signatures */
export function defineUpdate<Ret, Args extends any[] = [], Name extends string = string>(name: Name): UpdateDefinition<Ret, Args, Name> {
  return { type: 'update', name } as UpdateDefinition<Ret, Args, Name>;
}

export function defineSignal<Args extends any[] = [], Name extends string = string>(name: Name): SignalDefinition<Args, Name> {
  return { type: 'signal', name } as SignalDefinition<Args, Name>;
}

export function defineQuery<Ret, Args extends any[] = [], Name extends string = string>(name: Name): QueryDefinition<Ret, Args, Name> {
  return { type: 'query', name } as QueryDefinition<Ret, Args, Name>;
}
/* eslint-enable @typescript-eslint/no-explicit-any */
