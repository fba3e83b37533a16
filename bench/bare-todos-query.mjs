// The baseline of the CLI measurement: the smallest program that does what
// `agent-sessions todos <id> --json` does, written directly against @temporalio/client —
// connect, query `todos`, print the JSON, close. Run as a whole process by bench/cli.ts.
import { Client, Connection } from '@temporalio/client';

const [sessionId] = process.argv.slice(2);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
try {
  const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
  const todos = await client.workflow.getHandle(sessionId).query('todos');
  process.stdout.write(`${JSON.stringify(todos)}\n`);
} finally {
  await connection.close();
}
