/**
 * Installs the foreign MCP clients of test/integration/mcp-foreign-client.test.ts into the
 * per-user cache when they are missing (OpenCode from the npm registry, the Python MCP SDK from
 * PyPI into a virtual environment; see test/foreign-mcp-clients.ts), and prints where they are.
 * `.ci/run` calls this before the tests, so the install is not counted in the test's time.
 */
import { ensureOpencode, ensurePythonMcp } from '../test/foreign-mcp-clients';

Promise.all([ensureOpencode(), ensurePythonMcp()]).then(
  ([opencode, python]) => process.stdout.write(`opencode: ${opencode}\npython with the MCP SDK: ${python}\n`),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
