import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadMcpServers } from '../../src/config/mcp-servers';
import { bundledScriptFile } from '../../src/model-server';
import { ROOT, startTestBed, turnOf, uniqueId, waitForSession } from '../helpers';

// Inside the checkout (data/ is ignored by git), as a user's project folder is: the docs' `npx`
// then finds the filesystem server in this checkout's node_modules, as it does for a reader.
mkdirSync(join(ROOT, 'data'), { recursive: true });
const project = mkdtempSync(join(ROOT, 'data', 'tools-docs-'));
after(() => rmSync(project, { recursive: true, force: true }));

/** The first ```json block of docs/tools.md: the configuration a reader copies. */
function docsConfig(): string {
  const docs = readFileSync(join(ROOT, 'docs', 'tools.md'), 'utf8');
  const block = /```json\n([\s\S]*?)\n```/.exec(docs);
  assert.ok(block, 'docs/tools.md has a json block');
  return block[1]!;
}

test('docs/tools.md walk-through: with its mcp.json, the demo agent edits the workspace file through the filesystem server once the edit is approved', async () => {
  mkdirSync(join(project, 'workspace'));
  writeFileSync(join(project, 'workspace', 'CHANGELOG.md'), '# Changelog\n\n## Unreleased\n');
  writeFileSync(join(project, 'mcp.json'), docsConfig());
  const mcpServers = loadMcpServers(join(project, 'mcp.json'), process.env);
  const script = JSON.parse(readFileSync(bundledScriptFile('edit-file'), 'utf8'));
  const bed = await startTestBed('tools-docs', { allowParallelInProgress: true }, {
    model: { script },
    worker: { agent: { mcpServers, approveTools: ['mcp__fs__edit_file', 'mcp__fs__write_file'] } },
  });
  try {
    const id = uniqueId('notes');
    const { messageId } = await bed.client.sendMessage(id, 'Add a changelog entry');
    const waiting = await waitForSession(bed.client, id, (s) => s.agent.pendingApprovals.length > 0);
    const pending = waiting.agent.pendingApprovals[0];
    assert.equal(pending?.name, 'mcp__fs__edit_file', JSON.stringify(waiting.agent));
    assert.equal(pending?.callId, 'call_changelog_3_0', 'the call id the page shows');
    assert.equal(readFileSync(join(project, 'workspace', 'CHANGELOG.md'), 'utf8'), '# Changelog\n\n## Unreleased\n', 'nothing is written before the approval');
    await bed.client.approve(id, pending!.callId);
    const outcome = await turnOf(bed.client, id, messageId);
    assert.equal(outcome.reason, 'completed', outcome.detail ?? '');
    assert.match(readFileSync(join(project, 'workspace', 'CHANGELOG.md'), 'utf8'), /## Unreleased\n\n- Agents keep their plans in durable sessions, and edit files through MCP servers\./);
    assert.deepEqual((await bed.client.todos(id))?.map((t) => t.status), ['completed', 'completed']);
  } finally {
    await bed.close();
  }
});
