/** Says that a part of a long-running command stopped: one line each, and nothing else, on Ctrl-C. */
export function reportStopped(component: string): void {
  process.stderr.write(`stopped ${component}\n`);
}
