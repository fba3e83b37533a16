/** How many keys a {@link CountedOnce} remembers at least: far more than the writes in flight on one process. */
const REMEMBERED = 10_000;

/**
 * Remembers which keys were counted, so a repeated answer for the same key (a retried activity
 * whose first attempt was counted but whose completion was lost) is counted once. Bounded: it
 * keeps the last 10,000 to 20,000 keys, in two generations, the older dropped whole when the
 * newer is full (a Map trimmed one entry at a time from its front costs ~20 µs a key in V8).
 */
export class CountedOnce {
  private current = new Set<string>();
  private previous = new Set<string>();

  /** True the first time `key` is given (and it is then remembered), false after. */
  first(key: string): boolean {
    if (this.current.has(key) || this.previous.has(key)) return false;
    this.current.add(key);
    if (this.current.size >= REMEMBERED) {
      this.previous = this.current;
      this.current = new Set();
    }
    return true;
  }
}
