import { SessionTimeoutError, type SessionClient } from '../client';
import type { SessionSnapshot } from '../session';
import { withTimeLimit } from './time-limit';

/**
 * Reads sessions for many HTTP readers at once. Temporal buffers a single query per workflow
 * while a workflow task runs, so readers of one session share one in-flight `session` query
 * (busy answers are retried inside the client), and live watchers share one poll loop per
 * session that tells them only when the version changes. A shared read runs under its own time
 * limit, not under the first reader's: one reader giving up must not cancel the others' answer.
 */
export class SessionReader {
  private readonly inFlight = new Map<string, Promise<SessionSnapshot>>();
  private readonly existing = new Map<string, Promise<void>>();
  private readonly watches = new Map<string, Watch>();
  private readonly closing = new AbortController();

  constructor(
    private readonly client: SessionClient,
    /** Pause between polls of a watched session. */
    private readonly pollMs = 250,
    /** Longest wait for one read; past it the query is cancelled and the read fails with `session-timeout`. */
    private readonly timeoutMs = 10_000,
  ) {}

  /**
   * The session's current state; concurrent calls for one session share a single query.
   *
   * @throws SessionTimeoutError when no answer came within the time limit (the query is cancelled).
   */
  read(sessionId: string): Promise<SessionSnapshot> {
    return this.shared(this.inFlight, sessionId, () => this.client.session(sessionId));
  }

  /**
   * Resolves when the session exists (running or closed), from Temporal alone: no worker answers
   * it, so it holds while the session's workers are down or busy. Concurrent calls for one session
   * share a single look, under the same time limit as a read.
   *
   * @throws SessionNotFoundError when there is no such session.
   * @throws SessionTimeoutError when no answer came within the time limit.
   */
  exists(sessionId: string): Promise<void> {
    return this.shared(this.existing, sessionId, () => this.client.assertExists(sessionId));
  }

  /**
   * The call in flight for `sessionId` in `inFlight`, or `call` started under the reader's time
   * limit (cancelled past it, failing with `session-timeout`) and kept there until it settles.
   */
  private shared<T>(inFlight: Map<string, Promise<T>>, sessionId: string, call: () => Promise<T>): Promise<T> {
    let pending = inFlight.get(sessionId);
    if (pending === undefined) {
      const limited = withTimeLimit(this.client.temporal.connection, this.timeoutMs, call, () => new SessionTimeoutError(sessionId), this.closing.signal);
      pending = limited.finally(() => inFlight.delete(sessionId));
      inFlight.set(sessionId, pending);
    }
    return pending;
  }

  /**
   * Calls `listener` with the state now and on every later change (see {@link changeMark}), until the
   * returned function is called. Errors while polling are passed to `onError` and polling goes
   * on (a restarting worker or server must not end a dashboard's stream).
   */
  watch(sessionId: string, listener: (snapshot: SessionSnapshot) => void, onError: (error: unknown) => void): () => void {
    let watch = this.watches.get(sessionId);
    if (watch === undefined) {
      watch = new Watch(() => this.read(sessionId), this.pollMs, () => this.watches.delete(sessionId));
      this.watches.set(sessionId, watch);
    }
    return watch.add(listener, onError);
  }

  /** Stops every poll loop and cancels the reads in flight. */
  close(): void {
    this.closing.abort();
    for (const watch of this.watches.values()) watch.stop();
    this.watches.clear();
  }
}

type Listener = { onChange: (snapshot: SessionSnapshot) => void; onError: (error: unknown) => void };

class Watch {
  private readonly listeners = new Set<Listener>();
  private last: SessionSnapshot | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly read: () => Promise<SessionSnapshot>,
    private readonly pollMs: number,
    private readonly onEmpty: () => void,
  ) {}

  add(onChange: Listener['onChange'], onError: Listener['onError']): () => void {
    const listener = { onChange, onError };
    this.listeners.add(listener);
    if (this.last !== undefined) onChange(this.last);
    if (this.listeners.size === 1) void this.poll();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) {
        this.stop();
        this.onEmpty();
      }
    };
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    try {
      const snapshot = await this.read();
      const changed = this.last === undefined || changeMark(snapshot) !== changeMark(this.last);
      this.last = snapshot;
      if (changed) for (const listener of this.listeners) listener.onChange(snapshot);
    } catch (error) {
      for (const listener of this.listeners) listener.onError(error);
    }
    if (this.stopped) return;
    // A closed session only changes when a late child report arrives: poll it less often.
    this.timer = setTimeout(() => void this.poll(), this.last?.closed ? this.pollMs * 8 : this.pollMs);
  }
}

/**
 * What a watcher compares to see a change: the version, whether the session is closed, the
 * newest ignored signal (listing one changes nothing else, not even the version; the list is
 * bounded, so its length alone stops moving once full), and the agent's revision, which moves
 * with every step of a turn (a model call, a tool result, a call waiting for approval) that
 * leaves the version alone.
 */
function changeMark(snapshot: SessionSnapshot): string {
  const newest = snapshot.ignoredSignals?.at(-1);
  return JSON.stringify([snapshot.version, snapshot.closed, snapshot.ignoredSignals?.length ?? 0, newest?.at ?? null, newest?.name ?? null, snapshot.agent?.revision ?? 0]);
}
