/**
 * Temporal buffers one query per workflow while a workflow task runs, and admits 10 updates in
 * flight per workflow; past that it answers busy / resource exhausted (DESIGN §9). That is a
 * reason to ask again shortly, never an error for the caller: retry with a short, growing,
 * jittered pause (at most a second each). Only for calls that are safe to repeat: queries, and
 * updates that carry their update id.
 */
export async function withBusyRetry<T>(ask: () => Promise<T>, attempts = 12): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (error) {
      if (attempt >= attempts || !isBusy(error)) throw error;
      const pause = Math.min(1000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** Whether an error is Temporal's "too many queries / resource exhausted" kind of busy. */
export function isBusy(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (code === 8 || /RESOURCE_EXHAUSTED|too many|busy|concurrent.*limit/i.test(e.message)) return true;
  }
  return false;
}

/**
 * Whether an error means Temporal could not be reached or did not answer in time (gRPC
 * UNAVAILABLE or DEADLINE_EXCEEDED, a refused connection). Matched on codes and on Temporal's
 * own phrases only, so a local "resource temporarily unavailable" is not mistaken for it.
 */
export function isUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (code === 14 || code === 4) return true;
    if (/\b(14 UNAVAILABLE|4 DEADLINE_EXCEEDED)\b|ECONNREFUSED|Failed to connect|No connection established|deadline exceeded/i.test(e.message)) return true;
  }
  return false;
}
