import type { ConnectionLike } from '@temporalio/client';

/**
 * Runs `call`, whose Temporal requests all go through `connection`, for at most `ms`. When the
 * time is up (or `signal` aborts), every request still in flight is cancelled (the connection's
 * abort signal) and the promise rejects with `onTimeout()` at once; a request begun after that
 * (a retry after a pause) carries a deadline that has passed, so it ends without waiting. Nothing
 * goes on asking Temporal after the caller was told there is no answer.
 *
 * A call whose request already reached Temporal may still take effect (an update that was
 * delivered is applied when a worker comes): cancelling stops the waiting, not the server.
 * `onTimeout` must say so for a change.
 *
 * An inner time limit replaces an outer one for the requests inside it (the SDK keeps one abort
 * signal per scope), which is what lets a read shared by several callers outlive the first one.
 */
export async function withTimeLimit<T>(connection: ConnectionLike, ms: number, call: () => Promise<T>, onTimeout: () => Error, signal?: AbortSignal): Promise<T> {
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  const timer = setTimeout(stop, ms);
  signal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted) stop();
  const stopped = new Promise<never>((_, reject) => abort.signal.addEventListener('abort', () => reject(onTimeout()), { once: true }));
  // The deadline trails the abort a little, so a request in flight is cancelled (not timed out)
  // and never fails with DEADLINE_EXCEEDED before the abort has decided the answer.
  const deadline = Date.now() + ms + 50;
  const running = connection.withDeadline(deadline, () => connection.withAbortSignal(abort.signal, call));
  running.catch(() => undefined); // Its failure after the time is up is the timeout's, already answered.
  try {
    return await Promise.race([running, stopped]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
  }
}
