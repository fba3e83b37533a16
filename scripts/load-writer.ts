/**
 * One load-writing client process for the scale check: the thin entry point of
 * bench/load/writer.ts (see there for the flags and the report it prints).
 *
 * Run: npx tsx scripts/load-writer.ts --writer 0 --sessions a,b,c --writes 20 [--concurrency 8]
 */
import { describeError, writerMain } from '../bench/load/writer';

writerMain(process.argv.slice(2), process.env).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`load-writer: ${describeError(error)}\n`);
    process.exitCode = 1;
  },
);
