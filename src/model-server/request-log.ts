/** One chat-completions request the server received, as durability tests count them. */
export interface ModelRequestRecord {
  /** 1, 2, 3… in the order the requests arrived. */
  seq: number;
  /** When it arrived (ISO 8601). */
  at: string;
  /** The conversation and step it was routed to; null when it got no further (malformed, unmatched). */
  conversation: string | null;
  step: number | null;
  /** The status answered, or to be answered while the request is in flight (0 before it is routed). */
  status: number;
  /** The answer is being prepared or waited for (`delayMs`) and the socket is still open. */
  inFlight: boolean;
  /** The whole answer was written before the socket closed. */
  completed: boolean;
  /** The request asked for a streamed answer (`stream: true`). */
  stream: boolean;
  /** The answer went out as Server-Sent Events chunks. */
  streamed: boolean;
  /** When the first token of a streamed answer was written (ISO 8601, to the millisecond); null before, or for an answer not streamed. */
  firstTokenAt: string | null;
}

/** How many records are kept: the oldest go first, `seq` keeps counting. */
const KEPT = 10_000;

interface Waiter {
  predicate: (record: ModelRequestRecord) => boolean;
  resolve: (record: ModelRequestRecord) => void;
}

/** The server's request log, and the per-step counts that decide when a scripted error stops. */
export class RequestLog {
  private records: ModelRequestRecord[] = [];
  private seq = 0;
  private attempts = new Map<string, number>();
  private waiters = new Set<Waiter>();

  /** Copies of the records, oldest first. */
  list(): ModelRequestRecord[] {
    return this.records.map((record) => ({ ...record }));
  }

  /** Records a request that just arrived; the returned record is updated by {@link update}. */
  open(): ModelRequestRecord {
    const record: ModelRequestRecord = {
      seq: ++this.seq,
      at: new Date().toISOString(),
      conversation: null,
      step: null,
      status: 0,
      inFlight: true,
      completed: false,
      stream: false,
      streamed: false,
      firstTokenAt: null,
    };
    this.records.push(record);
    if (this.records.length > KEPT) this.records.shift();
    this.changed(record);
    return record;
  }

  /** Changes a record and wakes whoever waits for such a record. */
  update(record: ModelRequestRecord, change: Partial<Omit<ModelRequestRecord, 'seq' | 'at'>>): void {
    Object.assign(record, change);
    this.changed(record);
  }

  /** Counts one more request for a step and returns the count, this request included. */
  attempt(conversation: string, step: number): number {
    const key = `${conversation}\u0000${step}`;
    const count = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, count);
    return count;
  }

  /** Forgets every record and every count (the sequence restarts at 1). */
  reset(): void {
    this.records = [];
    this.seq = 0;
    this.attempts.clear();
  }

  /**
   * Resolves with the first record, already logged or still to come, that satisfies `predicate`
   * (checked again on every change of a record); rejects after `timeoutMs`.
   */
  waitFor(predicate: (record: ModelRequestRecord) => boolean, timeoutMs: number): Promise<ModelRequestRecord> {
    const found = this.records.find(predicate);
    if (found !== undefined) return Promise.resolve({ ...found });
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve: (record) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve({ ...record });
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no model request satisfied the condition within ${timeoutMs} ms; requests so far: ${JSON.stringify(this.list())}`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private changed(record: ModelRequestRecord): void {
    for (const waiter of [...this.waiters]) if (waiter.predicate(record)) waiter.resolve(record);
  }
}
