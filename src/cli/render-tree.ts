import type { SessionListing, SessionTree } from '../client';
import { renderTodoList, STATUS_MARKS } from '../todo/render-list';
import type { TodoCounts } from '../todo/todo-item';

function countsLine(counts: TodoCounts): string {
  return `${counts.pending} pending, ${counts.in_progress} in progress, ${counts.completed} completed`;
}

/**
 * An indented tree a person reads at a glance: each session, its state, and its todos with marks:
 * the whole list where it was read (the root; every subagent with `--full`), else the todos in
 * progress its summary holds.
 */
export function renderTree(tree: SessionTree, depth = 0): string {
  const pad = '    '.repeat(depth);
  const indent = `${pad}${depth === 0 ? '  ' : '     '}`;
  const head = `${pad}${depth === 0 ? '' : '└─ '}${tree.id}${tree.closed ? ' (closed)' : ''}: ${countsLine(tree.counts)}`;
  const body = tree.todos !== undefined ? renderTodoList(tree.todos, indent) : summaryLines(tree, indent);
  return [head, ...(body !== '' ? [body] : []), ...tree.children.map((child) => renderTree(child, depth + 1))].join('\n');
}

/** What a summarized subagent shows of its list: the todos in progress, and how many its summary left out. */
function summaryLines(tree: SessionTree, indent: string): string {
  const shown = tree.inProgressContent ?? [];
  const lines = shown.map((content) => `${indent}${STATUS_MARKS.in_progress} ${content}`);
  const unshown = tree.counts.in_progress - shown.length;
  if (unshown > 0) lines.push(`${indent}(${unshown} more in progress)`);
  return lines.join('\n');
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
