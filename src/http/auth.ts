import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether an `Authorization` header carries the bearer token. Both sides are hashed first so
 * the comparison takes the same time whatever the length or content of the guess.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim() ?? '';
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}
