import type { OpenAPIHonoOptions } from '@hono/zod-openapi';
import type { Env } from 'hono';
import type { ErrorAnswer } from './http-errors';

/** A validation hook that fits any route (the shape of OpenAPIHono's `defaultHook`). */
type ValidationHook = NonNullable<OpenAPIHonoOptions<Env>['defaultHook']>;

/**
 * What a request that breaks a route's schema gets: 400 with one sentence, `invalid-input`,
 * never zod's list of issues. `sentence` is the route's own ("the body must be …"); without
 * one, the first issue is named with its place.
 */
export function refuseInvalid(sentence?: string): ValidationHook {
  return (result, c) => {
    if (result.success) return undefined;
    const issue = result.error.issues[0];
    const where = issue !== undefined && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    const body: ErrorAnswer['body'] = {
      error: sentence ?? `the request's ${result.target} is not valid${where}: ${issue?.message ?? 'it does not match the API'}`,
      code: 'invalid-input',
    };
    return c.json(body, 400);
  };
}
