import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { listWorkspaceFiles, MAX_LIST_ENTRIES, MAX_READ_BYTES, readWorkspaceFile } from '../../activities/workspace-tools';

let base: string;
let workspace: string;
let outside: string;

before(() => {
  base = mkdtempSync(join(tmpdir(), 'agent-sessions-workspace-'));
  workspace = join(base, 'workspace');
  outside = join(base, 'outside');
  mkdirSync(join(workspace, 'src', 'deep'), { recursive: true });
  mkdirSync(join(workspace, 'many'));
  mkdirSync(outside);
  writeFileSync(join(workspace, 'README.md'), '# Demo\nA workspace for tests.\n');
  writeFileSync(join(workspace, 'src', 'index.ts'), 'export const answer = 42;\n');
  writeFileSync(join(workspace, 'big.txt'), 'x'.repeat(MAX_READ_BYTES + 1000));
  writeFileSync(join(workspace, 'image.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
  writeFileSync(join(outside, 'secret.txt'), 'the secret outside the workspace');
  for (let i = 0; i < MAX_LIST_ENTRIES + 20; i++) writeFileSync(join(workspace, 'many', `file-${String(i).padStart(4, '0')}.txt`), '');
  // Links: one out of the workspace (to a file and to a folder), one that stays inside.
  symlinkSync(join(outside, 'secret.txt'), join(workspace, 'leak.txt'));
  symlinkSync(outside, join(workspace, 'src', 'escape'));
  symlinkSync(join(workspace, 'README.md'), join(workspace, 'readme-link.md'));
});

after(() => rmSync(base, { recursive: true, force: true }));

describe('read_file', () => {
  test('reads a text file by a path relative to the workspace', async () => {
    assert.deepEqual(await readWorkspaceFile(workspace, 'src/index.ts'), { ok: true, content: 'export const answer = 42;\n' });
    assert.deepEqual(await readWorkspaceFile(workspace, './src/deep/../index.ts'), { ok: true, content: 'export const answer = 42;\n' });
  });

  test('follows a symbolic link that stays inside the workspace', async () => {
    const read = await readWorkspaceFile(workspace, 'readme-link.md');
    assert.equal(read.ok, true);
    assert.match(read.content, /# Demo/);
  });

  test('refuses ".." that climbs out of the workspace, however it is spelled', async () => {
    for (const path of ['../outside/secret.txt', 'src/../../outside/secret.txt', 'src/deep/../../../outside/secret.txt']) {
      const read = await readWorkspaceFile(workspace, path);
      assert.equal(read.ok, false, path);
      assert.match(read.content, /leads outside the workspace/, path);
      assert.doesNotMatch(read.content, /the secret/);
    }
  });

  test('refuses an absolute path outside the workspace and accepts one inside it', async () => {
    const read = await readWorkspaceFile(workspace, join(outside, 'secret.txt'));
    assert.equal(read.ok, false);
    assert.match(read.content, /is outside the workspace/);
    assert.equal((await readWorkspaceFile(workspace, '/etc/passwd')).ok, false);
    assert.equal((await readWorkspaceFile(workspace, join(workspace, 'README.md'))).ok, true);
  });

  test('refuses a symbolic link that points out of the workspace, to a file or through a folder', async () => {
    for (const path of ['leak.txt', 'src/escape/secret.txt']) {
      const read = await readWorkspaceFile(workspace, path);
      assert.equal(read.ok, false, path);
      assert.match(read.content, /symbolic link to a place outside the workspace/, path);
      assert.doesNotMatch(read.content, /the secret/);
    }
  });

  test('cuts a large file at the limit and says how large it is', async () => {
    const read = await readWorkspaceFile(workspace, 'big.txt');
    assert.equal(read.ok, true);
    assert.ok(read.content.startsWith('x'.repeat(MAX_READ_BYTES)));
    assert.match(read.content, new RegExp(`is ${MAX_READ_BYTES + 1000} bytes; only the first ${MAX_READ_BYTES} are shown`));
  });

  test('answers a missing file, a folder, a binary file and an empty path as results the model can act on', async () => {
    assert.match((await readWorkspaceFile(workspace, 'nope.txt')).content, /no such file or folder: "nope.txt"/);
    assert.match((await readWorkspaceFile(workspace, 'src')).content, /is a folder; list it with list_files/);
    assert.match((await readWorkspaceFile(workspace, 'image.bin')).content, /is a binary file \(7 bytes\)/);
    assert.match((await readWorkspaceFile(workspace, '  ')).content, /the path is empty/);
    assert.match((await readWorkspaceFile(workspace, 'a\0b')).content, /NUL/);
  });
});

describe('list_files', () => {
  test('lists the workspace by default, folders with "/" and links with "@", sorted', async () => {
    const listed = await listWorkspaceFiles(workspace);
    assert.equal(listed.ok, true);
    assert.deepEqual(listed.content.split('\n'), ['README.md', 'big.txt', 'image.bin', 'leak.txt@', 'many/', 'readme-link.md@', 'src/']);
  });

  test('lists a folder by its relative path, entries shown with that path', async () => {
    assert.deepEqual(await listWorkspaceFiles(workspace, 'src'), { ok: true, content: ['src/deep/', 'src/escape@', 'src/index.ts'].join('\n') });
    assert.deepEqual(await listWorkspaceFiles(workspace, 'src/deep'), { ok: true, content: 'src/deep is empty' });
  });

  test('bounds a long listing and says how many entries were left out', async () => {
    const lines = (await listWorkspaceFiles(workspace, 'many')).content.split('\n');
    assert.equal(lines.length, MAX_LIST_ENTRIES + 1);
    assert.equal(lines.at(-1), '[list_files: 20 more entries not shown]');
  });

  test('refuses folders outside the workspace, by "..", absolute path or link', async () => {
    for (const path of ['..', '../outside', outside, 'src/escape']) {
      const listed = await listWorkspaceFiles(workspace, path);
      assert.equal(listed.ok, false, path);
      assert.match(listed.content, /outside the workspace/, path);
      assert.doesNotMatch(listed.content, /secret/);
    }
  });

  test('answers a file or a missing folder as a result', async () => {
    assert.match((await listWorkspaceFiles(workspace, 'README.md')).content, /is a file, not a folder/);
    assert.match((await listWorkspaceFiles(workspace, 'gone')).content, /no such file or folder/);
  });
});
