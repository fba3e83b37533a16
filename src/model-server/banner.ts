import type { ModelServer } from './model-server';

/**
 * The line that announces a scripted model, so nobody mistakes its answers for a real model's:
 * `scripted model (not a real model: answers come from models/lint-fix.json) at http://127.0.0.1:8090/v1 — 1 conversation`.
 */
export function modelServerBanner(server: Pick<ModelServer, 'url' | 'script'>): string {
  const count = server.script.conversations.length;
  return `scripted model (not a real model: answers come from ${server.script.source}) at ${server.url} — ${count} conversation${count === 1 ? '' : 's'}`;
}
