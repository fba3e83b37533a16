/**
 * Readers waiting for more entries of a stream, woken by whatever learns of new ones (a NOTIFY, a
 * poll of the SQLite file, an append in this process). Shared by both backends.
 */
export class Waiters {
  private readonly waiting = new Map<string, Set<{ next: number; wake: () => void }>>();
  private readonly begun = new Map<string, number>();
  private readonly peak = new Map<string, number>();

  /** Streams someone waits on now. */
  streams(): string[] {
    return [...this.waiting.keys()];
  }

  get size(): number {
    return this.waiting.size;
  }

  /** Waits begun so far, by stream. */
  counts(): ReadonlyMap<string, number> {
    return this.begun;
  }

  /** The most waits on each stream at one time so far. */
  peaks(): ReadonlyMap<string, number> {
    return this.peak;
  }

  /** Registers a wait for `stream` to reach past `next`; answers the promise and the function that ends it early. */
  add(stream: string, next: number): { woken: Promise<void>; end: () => void } {
    this.begun.set(stream, (this.begun.get(stream) ?? 0) + 1);
    let set = this.waiting.get(stream);
    if (set === undefined) this.waiting.set(stream, (set = new Set()));
    let wake: () => void = () => undefined;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const entry = { next, wake: () => undefined as void };
    const end = (): void => {
      set.delete(entry);
      if (set.size === 0 && this.waiting.get(stream) === set) this.waiting.delete(stream);
      wake();
    };
    entry.wake = end;
    set.add(entry);
    this.peak.set(stream, Math.max(this.peak.get(stream) ?? 0, set.size));
    return { woken, end };
  }

  /** `stream` now ends at `next`: wakes whoever waited for less. */
  notify(stream: string, next: number): void {
    for (const entry of [...(this.waiting.get(stream) ?? [])]) if (next > entry.next) entry.wake();
  }

  /** Wakes everyone (the store closes). */
  wakeAll(): void {
    for (const set of [...this.waiting.values()]) for (const entry of [...set]) entry.wake();
  }
}

/** Waits on `waiters` for `stream` past `next`, checking `current` once the wait is registered (so an append in between is not missed). */
export async function waitOn(
  waiters: Waiters,
  stream: string,
  next: number,
  current: () => Promise<number>,
  options: { signal?: AbortSignal; maxWaitMs?: number } = {},
): Promise<void> {
  if (options.signal?.aborted === true) return;
  const { woken, end } = waiters.add(stream, next);
  const timer = setTimeout(end, options.maxWaitMs ?? 15_000);
  const abort = (): void => end();
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    if ((await current()) > next) end();
    await woken;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', abort);
    end();
  }
}
