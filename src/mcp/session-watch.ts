import type { SessionSnapshot } from '../session';

/** Watches one session: `listener` with each new state, until the returned function is called. */
export type WatchSession = (listener: (snapshot: SessionSnapshot) => void, onError: (error: unknown) => void) => () => void;

/**
 * Tells its listeners when a session's list may have changed: a newer version (an accepted
 * write from any client, a turn starting or ending) or the session closing. Writes made through
 * this process say so at once ({@link ListChanges.written}); the others are seen by watching the
 * session (its `session` query, polled), which runs only while someone listens. The state the
 * watch finds first is the baseline, not a change; a session created after the watch began
 * changes from nothing, so its first write is a change.
 */
export class ListChanges {
  private readonly listeners = new Set<() => void>();
  private stopWatch: (() => void) | undefined;
  /** The state the watch found first; undefined until its first reading. */
  private baseline: { version: number; closed: boolean } | undefined;
  /** The newest version listeners were told of. */
  private told = -1;
  private closed = false;

  constructor(
    private readonly watch: WatchSession,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Calls `listener` on every change until the returned function is called. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.stopWatch === undefined) {
      this.baseline = undefined;
      this.stopWatch = this.watch(
        (snapshot) => this.seen(snapshot.version, snapshot.closed),
        (error) => {
          // Before its first write the session does not exist: from nothing, its first state is a change.
          this.baseline ??= { version: 0, closed: false };
          this.onError(error);
        },
      );
    }
    return () => {
      if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
      this.stopWatch?.();
      this.stopWatch = undefined;
    };
  }

  /**
   * A write made here was accepted at `version`: a change, told now rather than at the next
   * poll, even when the watch's first reading already held it (it raced the write).
   */
  written(version: number): void {
    if (this.listeners.size === 0 || version <= this.told) return;
    this.tell(version);
  }

  /** How many listen now. */
  get size(): number {
    return this.listeners.size;
  }

  private seen(version: number, closed: boolean): void {
    if (this.baseline === undefined) {
      this.baseline = { version, closed };
      this.closed = closed;
      return;
    }
    const newer = version > Math.max(this.baseline.version, this.told);
    if (!newer && closed === this.closed) return;
    this.closed = closed;
    this.tell(Math.max(version, this.told));
  }

  private tell(version: number): void {
    this.told = version;
    for (const listener of [...this.listeners]) listener();
  }
}
