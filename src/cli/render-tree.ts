import type { SessionListing, SessionTree } from '../client';
import { renderTodoList } from '../todo/render-list';
import type { TodoCounts } from '../todo/todo-item';

function countsLine(counts: TodoCounts): string {
  return `${counts.pending} pending, ${counts.in_progress} in progress, ${counts.completed} completed`;
}

/** An indented tree a person reads at a glance: each session, its state, its todos with marks. */
export function renderTree(tree: SessionTree, depth = 0): string {
  const pad = '    '.repeat(depth);
  const head = `${pad}${depth === 0 ? '' : '└─ '}${tree.id}${tree.closed ? ' (closed)' : ''}: ${countsLine(tree.counts)}`;
  const body = renderTodoList(tree.todos, `${pad}${depth === 0 ? '  ' : '     '}`);
  return [head, body, ...tree.children.map((child) => renderTree(child, depth + 1))].join('\n');
}

/** `list` as a table with a header row. */
export function renderListing(sessions: readonly SessionListing[]): string {
  if (sessions.length === 0) return '(no sessions)';
  const rows = [
    ['SESSION', 'STATUS', 'PARENT', 'PENDING', 'IN PROGRESS', 'COMPLETED', 'VERSION', 'UPDATED'],
    ...sessions.map((s) => [
      s.id,
      s.status,
      s.parent ?? '-',
      String(s.counts?.pending ?? '?'),
      String(s.counts?.in_progress ?? '?'),
      String(s.counts?.completed ?? '?'),
      String(s.version ?? '?'),
      s.updatedAt,
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}
