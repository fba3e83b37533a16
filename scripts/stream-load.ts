/**
 * The load process of the streaming benchmark: the thin entry point of bench/load/stream-load.ts
 * (see there for its environment and protocol).
 *
 * Run: TEMPORAL_ADDRESS=… AGENT_SESSIONS_TASK_QUEUE=… npx tsx scripts/stream-load.ts
 */
import { streamLoadMain } from '../bench/load/stream-load';

streamLoadMain(process.env).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`stream-load: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
