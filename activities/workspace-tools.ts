import { constants } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { ToolOutcome } from './agent-contract';

/** Most bytes `read_file` returns; a longer file is cut there, saying so. */
export const MAX_READ_BYTES = 64 * 1024;

/** Most entries `list_files` returns; a longer listing is cut there, saying so. */
export const MAX_LIST_ENTRIES = 500;

/** Longest path a model may name, in characters. */
const MAX_PATH_CHARS = 1024;

/** Where a path the model named really is, or why the model may not have it. */
type Resolved = { ok: true; real: string; shown: string } | { ok: false; content: string };

/**
 * Finds a path the model named inside the workspace, refusing every way out: an absolute path
 * elsewhere, `..` that climbs above the workspace, and a symbolic link (anywhere along the
 * path) whose target lies outside. The check is made on real paths (`realpath` of the target
 * against `realpath` of the workspace), so a link is judged by where it really leads.
 */
async function resolveInside(workspace: string, path: string, tool: string): Promise<Resolved> {
  const refuse = (why: string): Resolved => ({ ok: false, content: `${tool}: ${why}` });
  if (path.length > MAX_PATH_CHARS) return refuse(`the path is ${path.length} characters long; at most ${MAX_PATH_CHARS} are accepted`);
  if (path.includes('\0')) return refuse('the path contains a NUL character');
  const root = await realpath(workspace);
  const lexical = resolve(root, path);
  if (!isWithin(root, lexical)) {
    return refuse(
      isAbsolute(path)
        ? `${JSON.stringify(path)} is outside the workspace; give a path relative to the workspace`
        : `${JSON.stringify(path)} leads outside the workspace (".." may not climb above it)`,
    );
  }
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return refuse(`no such file or folder: ${JSON.stringify(path)}`);
    if (code === 'ELOOP') return refuse(`${JSON.stringify(path)} is a loop of symbolic links`);
    return refuse(`cannot open ${JSON.stringify(path)} (${code ?? 'error'})`);
  }
  if (!isWithin(root, real)) return refuse(`${JSON.stringify(path)} is a symbolic link to a place outside the workspace; the file tools reach only what is inside it`);
  const shown = relative(root, real);
  return { ok: true, real, shown: shown === '' ? '.' : shown };
}

function isWithin(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * `read_file`: the text of a file inside the workspace, at most {@link MAX_READ_BYTES} bytes
 * (a longer file is cut, and the result says how much was left out). A folder, a binary file,
 * a missing file or a path outside the workspace is a result the model reads, never a thrown
 * error.
 */
export async function readWorkspaceFile(workspace: string, path: string): Promise<ToolOutcome> {
  const tool = 'read_file';
  if (path.trim() === '') return { ok: false, content: `${tool}: the path is empty; name a file relative to the workspace` };
  const found = await resolveInside(workspace, path, tool);
  if (!found.ok) return found;
  let handle;
  try {
    // O_NOFOLLOW: a link swapped in after the check above is refused rather than followed.
    handle = await open(found.real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') return isFolder(tool, path);
    return { ok: false, content: `${tool}: cannot open ${JSON.stringify(path)} (${code ?? 'error'})` };
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) return isFolder(tool, path);
    if (!info.isFile()) return { ok: false, content: `${tool}: ${JSON.stringify(path)} is not a regular file` };
    const buffer = Buffer.alloc(Math.min(info.size, MAX_READ_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const bytes = buffer.subarray(0, bytesRead);
    if (bytes.includes(0)) return { ok: false, content: `${tool}: ${JSON.stringify(path)} is a binary file (${info.size} bytes); read_file returns text only` };
    // A cut may fall inside a multi-byte character; the decoder marks that one character.
    const text = bytes.toString('utf8');
    if (info.size <= bytesRead) return { ok: true, content: text };
    return { ok: true, content: `${text}\n[read_file: ${JSON.stringify(path)} is ${info.size} bytes; only the first ${bytesRead} are shown]` };
  } finally {
    await handle.close();
  }
}

function isFolder(tool: string, path: string): ToolOutcome {
  return { ok: false, content: `${tool}: ${JSON.stringify(path)} is a folder; list it with list_files` };
}

/**
 * `list_files`: the entries of a folder inside the workspace (the workspace itself by
 * default), one per line, folders ending in `/`, symbolic links marked with `@`, at most
 * {@link MAX_LIST_ENTRIES} (a longer listing says how many were left out).
 */
export async function listWorkspaceFiles(workspace: string, path = '.'): Promise<ToolOutcome> {
  const tool = 'list_files';
  const found = await resolveInside(workspace, path.trim() === '' ? '.' : path, tool);
  if (!found.ok) return found;
  const info = await stat(found.real);
  if (!info.isDirectory()) return { ok: false, content: `${tool}: ${JSON.stringify(path)} is a file, not a folder; read it with read_file` };
  let entries;
  try {
    entries = await readdir(found.real, { withFileTypes: true });
  } catch (error) {
    return { ok: false, content: `${tool}: cannot list ${JSON.stringify(path)} (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (entries.length === 0) return { ok: true, content: `${found.shown} is empty` };
  const names = entries
    .map((entry) => entry.name + (entry.isDirectory() ? '/' : entry.isSymbolicLink() ? '@' : ''))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const shown = names.slice(0, MAX_LIST_ENTRIES);
  const lines = found.shown === '.' ? shown : shown.map((name) => join(found.shown, name));
  if (names.length > shown.length) lines.push(`[list_files: ${names.length - shown.length} more entries not shown]`);
  return { ok: true, content: lines.join('\n') };
}
