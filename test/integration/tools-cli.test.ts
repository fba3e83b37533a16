import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT, runCli, startTestBed, uniqueId } from '../helpers';
import { FILESYSTEM_SERVER } from '../mcp-servers';

const TOOLS_MODULE = join(ROOT, 'test', 'fixtures', 'tools-module.mjs');
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'tools-cli-')));

function mcpConfig(servers: Record<string, unknown>): string {
  const file = join(scratch, `${uniqueId('mcp')}.json`);
  writeFileSync(file, JSON.stringify({ mcpServers: servers }));
  return file;
}

describe('agent-sessions tools', () => {
  test('lists every tool a worker of these settings offers: built-in, from the tools module and from each MCP server, and which wait for a person', async () => {
    const config = mcpConfig({ fs: { command: process.execPath, args: [FILESYSTEM_SERVER, scratch] } });
    const listed = await runCli(['tools', '--json'], { env: { AGENT_SESSIONS_TOOLS: TOOLS_MODULE, AGENT_SESSIONS_MCP_CONFIG: config, AGENT_SESSIONS_APPROVE_TOOLS: '' } });
    assert.equal(listed.code, 0, listed.stderr);
    const tools = JSON.parse(listed.stdout) as Array<{ name: string; source: string; needsApproval: boolean }>;
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.equal(byName.get('todo_write')?.source, 'built-in');
    assert.equal(byName.get('word_count')?.source, `module:${TOOLS_MODULE}`);
    assert.equal(byName.get('mcp__fs__write_file')?.source, 'mcp:fs');
    assert.equal(byName.get('mcp__fs__write_file')?.needsApproval, true, 'every MCP tool waits by default');
    assert.equal(byName.get('word_count')?.needsApproval, false);

    const text = await runCli(['tools'], { env: { AGENT_SESSIONS_TOOLS: TOOLS_MODULE, AGENT_SESSIONS_APPROVE_TOOLS: 'word_*' } });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^word_count {2}\(module:.*tools-module\.mjs, needs approval\)$/m);
  });

  test('a server that cannot start is said, and the others are listed', async () => {
    const config = mcpConfig({ gone: { command: process.execPath, args: ['-e', 'process.exit(4)'] } });
    const listed = await runCli(['tools'], { env: { AGENT_SESSIONS_MCP_CONFIG: config } });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^todo_write/m);
    assert.match(listed.stderr, /The tools of the MCP server "gone" are not available this turn/);
  });

  test('tools accept on a session that withholds nothing is refused, naming the rule', async () => {
    const bed = await startTestBed('tools-cli', { allowParallelInProgress: true });
    try {
      const id = uniqueId('accept');
      await bed.client.start(id);
      const refused = await runCli(['tools', 'accept', id], { env: { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue } });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /no tool is withheld in this session; there is nothing to accept \[no-withheld-tool\]/);
    } finally {
      await bed.close();
    }
  });
});

describe('a worker with bad tool settings does not start', () => {
  test('a module tool with the name of a built-in one, named with both', async () => {
    const clash = join(scratch, 'clash.mjs');
    writeFileSync(clash, "export default [{ name: 'read_file', description: 'Mine.', parameters: { type: 'object' }, run: () => 'x' }];\n");
    const started = await runCli(['worker', '--allow-parallel-in-progress', 'true', '--tools', clash], { env: { AGENT_SESSIONS_WORKSPACE: scratch } });
    assert.equal(started.code, 2, started.stderr);
    assert.match(started.stderr, /the tool "read_file" of .*clash\.mjs has the name of the built-in tool read_file: rename it/);
  });

  test('an MCP configuration with a bad field, named with the server and the field', async () => {
    const config = mcpConfig({ web: { url: 'ftp://example.com' } });
    const started = await runCli(['worker', '--allow-parallel-in-progress', 'true'], { env: { AGENT_SESSIONS_MCP_CONFIG: config } });
    assert.equal(started.code, 2, started.stderr);
    assert.match(started.stderr, /^agent-sessions: AGENT_SESSIONS_MCP_CONFIG \(.*\): server "web": "url" must be an http:\/\/ or https:\/\/ URL, got "ftp:\/\/example.com"\n$/);
  });

  test('a tools module that does not exist', async () => {
    const started = await runCli(['worker', '--allow-parallel-in-progress', 'true', '--tools', join(scratch, 'missing.mjs')]);
    assert.equal(started.code, 2, started.stderr);
    assert.match(started.stderr, /--tools \(AGENT_SESSIONS_TOOLS\) must name a JavaScript module .*no such file/);
  });
});
