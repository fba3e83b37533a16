import type { Context, MiddlewareHandler } from 'hono';
import { InvalidInputError } from '../client';

/**
 * The request body as JSON, decoded as strict UTF-8: a body that is not UTF-8 is refused, never
 * silently repaired with U+FFFD, because the stored list must be what was sent.
 *
 * @throws InvalidInputError naming what is wrong with the body (400).
 */
export async function readJsonBody(c: Context): Promise<unknown> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await c.req.arrayBuffer());
  } catch {
    throw new InvalidInputError('the request body is not valid JSON: it is not UTF-8 text');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`the request body is not valid JSON (${(error as Error).message})`);
  }
}

/**
 * Refuses a body that is not strict UTF-8 JSON before a route's schema looks at it (the schema
 * validator would decode leniently). The body stays cached for the validator and the handler.
 */
export const strictJsonBody: MiddlewareHandler = async (c, next) => {
  await readJsonBody(c);
  await next();
};
