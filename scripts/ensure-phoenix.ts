/**
 * Finds Arize Phoenix (the trace UI of `up --traces`) in the per-user cache, installing it from
 * PyPI when it is missing (the first run on a machine; `.ci/run` calls this before the tests that
 * start it). Prints the path of the Python that runs it.
 */
import { findPhoenix } from '../src/devserver';

findPhoenix().then(
  (python) => process.stdout.write(`phoenix: ${python}\n`),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
