import { BoundedMap } from '../client/bounded-map';

/** How many keys a {@link CountedOnce} remembers: far more than the writes in flight on one process. */
const REMEMBERED = 10_000;

/**
 * Remembers which keys were counted, so a repeated answer for the same key (a retried activity
 * whose first attempt was counted but whose completion was lost) is counted once. Bounded: the
 * least recently seen keys are forgotten first.
 */
export class CountedOnce {
  private readonly seen = new BoundedMap<string, true>(REMEMBERED);

  /** True the first time `key` is given (and it is then remembered), false after. */
  first(key: string): boolean {
    if (this.seen.get(key) !== undefined) return false;
    this.seen.set(key, true);
    return true;
  }
}
