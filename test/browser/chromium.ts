/** Debian's Chromium for the browser tests: where it is, how it is launched, and installing it. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

export const CHROMIUM = '/usr/bin/chromium';
export const LAUNCH_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--disable-component-update', '--disable-sync', '--no-first-run'];
export const VIEWPORT = { width: 1280, height: 800 };

const run = promisify(execFile);

/**
 * Makes sure Debian's Chromium is there, installing it with apt-get when it is not (the test
 * machine runs as root). Answers why the tests must skip, or undefined when they can run.
 */
export async function ensureChromium(): Promise<string | undefined> {
  if (existsSync(CHROMIUM)) return undefined;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const options = { env, timeout: 15 * 60_000, maxBuffer: 64 * 1024 * 1024 };
  try {
    await run('apt-get', ['install', '-y', 'chromium'], options);
  } catch {
    try {
      await run('apt-get', ['update'], options);
      await run('apt-get', ['install', '-y', 'chromium'], options);
    } catch (error) {
      const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
      return `the browser tests need Chromium at ${CHROMIUM}, and apt-get install -y chromium failed (${detail})`;
    }
  }
  return existsSync(CHROMIUM) ? undefined : `apt-get install -y chromium finished but ${CHROMIUM} is still missing`;
}
