import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFreePort } from '../src/devserver';
import { ROOT } from './helpers';

/** The reference MCP servers from the npm registry that the tests run against. */
export const FILESYSTEM_SERVER = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
export const EVERYTHING_SERVER = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** `@modelcontextprotocol/server-everything` over Streamable HTTP on a free loopback port, once it answers. */
export async function startEverythingServer(): Promise<{ url: string; process: ChildProcess; stop(): void }> {
  const port = await findFreePort();
  const child = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  const url = `http://127.0.0.1:${port}/mcp`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answered = await fetch(url, { method: 'GET' }).then(
      () => true,
      () => false,
    );
    if (answered) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      throw new Error(`server-everything did not start listening on ${url} within 30 s`);
    }
    await sleep(200);
  }
  return { url, process: child, stop: () => void child.kill() };
}
