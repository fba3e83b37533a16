import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { mcpOutcome, mcpToolDefinition, mcpToolName, parseMcpToolName } from '../../activities/mcp-tools';
import { InvalidSettingError } from '../../src/client/errors';
import { DEFAULT_MCP_CALL_TIMEOUT_MS, loadMcpServers, parseMcpServers } from '../../src/config/mcp-servers';
import { MAX_TOOL_RESULT_CHARS } from '../../src/session';

const WHERE = { file: '/etc/agent/mcp.json', dir: '/etc/agent' };

function refusal(json: unknown, env: NodeJS.ProcessEnv = {}): string {
  try {
    parseMcpServers(json, env, WHERE);
  } catch (error) {
    assert.ok(error instanceof InvalidSettingError, String(error));
    return error.message;
  }
  assert.fail('the configuration was accepted');
}

describe('AGENT_SESSIONS_MCP_CONFIG', () => {
  test('reads the mcpServers shape of Claude Code and Cursor: stdio and Streamable HTTP, ${VAR} from the environment', () => {
    const servers = parseMcpServers(
      {
        mcpServers: {
          fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/work'], env: { TOKEN: '${FS_TOKEN}', MODE: '${FS_MODE:-ro}' }, cwd: 'tools' },
          docs: { type: 'http', url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' }, timeoutMs: 30_000, tools: ['search'] },
        },
      },
      { FS_TOKEN: 'fs-secret', DOCS_TOKEN: 'docs-secret' },
      WHERE,
    );
    assert.deepEqual(servers, [
      {
        name: 'fs',
        transport: { kind: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/work'], env: { TOKEN: 'fs-secret', MODE: 'ro' }, cwd: '/etc/agent/tools' },
        callTimeoutMs: DEFAULT_MCP_CALL_TIMEOUT_MS,
      },
      { name: 'docs', transport: { kind: 'http', url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer docs-secret' } }, callTimeoutMs: 30_000, tools: ['search'] },
    ]);
  });

  test('a bad entry is one sentence naming the file, the server and the field', () => {
    assert.match(refusal({ servers: {} }), /^AGENT_SESSIONS_MCP_CONFIG \(\/etc\/agent\/mcp.json\): expected an object \{"mcpServers"/);
    assert.match(refusal({ mcpServers: { fs: { command: 'x', url: 'http://a' } } }), /server "fs" needs exactly one of "command" \(stdio\) and "url"/);
    assert.match(refusal({ mcpServers: { fs: {} } }), /server "fs" needs exactly one of "command"/);
    assert.match(refusal({ mcpServers: { fs: { command: 'x', headers: {} } } }), /server "fs": "headers" is not a field of a stdio server/);
    assert.match(refusal({ mcpServers: { web: { url: 'ftp://a' } } }), /server "web": "url" must be an http:\/\/ or https:\/\/ URL, got "ftp:\/\/a"/);
    assert.match(refusal({ mcpServers: { web: { url: 'http://a', headers: { Authorization: 'Bearer ${MISSING}' } } } }), /server "web": "headers.Authorization" uses \$\{MISSING\}, which is not set/);
    assert.match(refusal({ mcpServers: { fs: { command: 'x', args: 'a b' } } }), /server "fs": "args" must be a list of strings/);
    assert.match(refusal({ mcpServers: { fs: { command: 'x', timeoutMs: 5 } } }), /"timeoutMs" must be a whole number of milliseconds from 1000 to 3600000, got 5/);
    assert.match(refusal({ mcpServers: { 'my__fs': { command: 'x' } } }), /server name "my__fs" must be 1-32 letters, digits, "-" or single "_"/);
    assert.match(refusal({ mcpServers: { fs: { type: 'sse', command: 'x' } } }), /server "fs": "type" is "sse"/);
  });

  test('a file that cannot be read or is not JSON is named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-config-'));
    const file = join(dir, 'mcp.json');
    assert.throws(() => loadMcpServers(file, {}), /AGENT_SESSIONS_MCP_CONFIG: cannot read .*mcp\.json/);
    writeFileSync(file, '{"mcpServers": ');
    assert.throws(() => loadMcpServers(file, {}), /AGENT_SESSIONS_MCP_CONFIG: .*mcp\.json is not JSON/);
  });
});

describe('MCP tools as the model sees them', () => {
  test('mcp__<server>__<tool> names, read back', () => {
    assert.equal(mcpToolName('fs', 'read_file'), 'mcp__fs__read_file');
    assert.deepEqual(parseMcpToolName('mcp__fs__read_file'), { server: 'fs', tool: 'read_file' });
    assert.deepEqual(parseMcpToolName('mcp__fs__a__b'), { server: 'fs', tool: 'a__b' });
    assert.equal(parseMcpToolName('read_file'), undefined);
    assert.equal(parseMcpToolName('mcp__fs__'), undefined);
  });

  test("a tool's definition is the server's description and input schema", () => {
    const definition = mcpToolDefinition('mcp__fs__read_file', {
      name: 'read_file',
      description: 'Read a file',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], $schema: 'http://json-schema.org/draft-07/schema#' },
    } as never);
    assert.deepEqual(definition, {
      type: 'function',
      function: { name: 'mcp__fs__read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    });
  });

  test('a result: text as it is, structured content as JSON, other content named, isError a failed call, all cut like any tool result', () => {
    assert.deepEqual(mcpOutcome({ content: [{ type: 'text', text: 'hello' }] }), { ok: true, content: 'hello' });
    assert.deepEqual(mcpOutcome({ content: [], structuredContent: { sum: 3 } }), { ok: true, content: '{"sum":3}' });
    assert.deepEqual(mcpOutcome({ content: [{ type: 'text', text: 'no such file' }], isError: true }), { ok: false, content: 'no such file' });
    const mixed = mcpOutcome({
      content: [
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
        { type: 'resource', resource: { uri: 'file:///b.txt', text: 'bee' } },
      ],
    } as never);
    assert.equal(mixed.content, '[image image/png, 3 bytes, not shown]\n[resource link file:///a.txt "a.txt"]\n[resource file:///b.txt]\nbee');
    const huge = mcpOutcome({ content: [{ type: 'text', text: 'x'.repeat(10 * 1024 * 1024) }] });
    assert.ok(huge.content.length <= MAX_TOOL_RESULT_CHARS);
    assert.match(huge.content, /more characters not shown\]$/);
  });
});
