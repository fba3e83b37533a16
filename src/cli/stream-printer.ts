import { applyModelStreamEvent, type LiveAnswer, type ModelStreamEvent } from '../session/model-stream';

/** Where a {@link StreamPrinter} writes: the model's words to `out` as they come, lines about what happens to `err`. */
export interface PrinterOutput {
  out(text: string): void;
  err(line: string): void;
}

/**
 * Prints the words of a turn's model calls as its stream brings them: the text to stdout as it
 * is written, a tool call's name to stderr (`→ todo_write …`) as soon as the model names it, and
 * a line when a call is retried (what it wrote so far is left standing, and its words start again
 * on a new line). Lines for stderr that come while the model is in the middle of a line of words
 * (what the turn did a moment before, told late) wait for the end of that line, so the two never
 * share or split a line on a terminal.
 */
export class StreamPrinter {
  private answer: LiveAnswer | null = null;
  private lineOpen = false;
  /** Lines for stderr waiting for the words' line to end. */
  private held: string[] = [];
  /** The text of the last call that ended complete. */
  private lastCompleted: string | undefined;
  private waiters: Array<() => void> = [];
  /** Whether any event came: a worker that does not stream sends none, and then nothing is worth waiting for. */
  private heard = false;

  constructor(private readonly output: PrinterOutput) {}

  /** Takes the next event of the stream. */
  take(event: ModelStreamEvent): void {
    this.heard = true;
    const before = this.answer;
    const after = applyModelStreamEvent(before, event);
    if (after === before) return;
    this.answer = after;
    switch (event.type) {
      case 'reset':
        this.endLine();
        this.output.err(`(the model call is being made again: its answer starts over)`);
        break;
      case 'text':
        this.output.out(event.text);
        this.lineOpen = !event.text.endsWith('\n');
        break;
      case 'tool':
        this.endLine();
        this.output.err(`→ ${event.name} …`);
        break;
      case 'end':
        this.endLine();
        if (event.outcome === 'completed' && after !== null) this.lastCompleted = after.text;
        for (const wake of this.waiters.splice(0)) wake();
        break;
      default:
        break;
    }
  }

  /** A line for stderr: now, or once the line of words being written ends. */
  line(text: string): void {
    if (this.lineOpen) this.held.push(text);
    else this.output.err(text);
  }

  /**
   * Whether the turn's answer was printed whole as it streamed: waits up to `ms` for the call
   * that wrote it to end, since the stream may lag the session by a moment (not at all when no
   * word came during the turn: its worker does not stream).
   */
  async printed(answer: string, ms: number): Promise<boolean> {
    if (!this.heard) return false;
    const deadline = Date.now() + ms;
    while (this.lastCompleted !== answer && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.lastCompleted === answer;
  }

  /** Ends the words' line, if one is open, and writes the lines that waited for it. */
  endLine(): void {
    if (this.lineOpen) {
      this.output.out('\n');
      this.lineOpen = false;
    }
    for (const line of this.held.splice(0)) this.output.err(line);
  }
}
