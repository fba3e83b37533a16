/**
 * Finds Jaeger in the per-user cache, building it from the Go module proxy when it is missing
 * (the first run on a machine; `.ci/run` calls this before the tests that start it). Prints its path.
 */
import { findJaegerBinary } from '../src/devserver';

findJaegerBinary().then(
  (path) => process.stdout.write(`jaeger: ${path}\n`),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
