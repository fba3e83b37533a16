import type { TodoCounts, TodoList } from '../todo';
import type { SessionTree } from './session-tree';

/**
 * The JSON shape of a session tree for other programs: `{ id, todos, counts, children }` at every
 * level as before, and beside them `name`, `closed`, `version`, `updatedAt`, `inProgressContent`
 * and `subagents`; the root also carries `nextPageToken`. A subagent's `todos` is there only when
 * its whole list was read (`full`): absent means summarized from its search attributes, not empty.
 */
export interface TreeJson {
  id: string;
  name: string | null;
  todos?: TodoList;
  counts: TodoCounts;
  closed: boolean;
  version: number | null;
  updatedAt: string | null;
  inProgressContent: string[] | null;
  subagents: number | null;
  children: TreeJson[];
  nextPageToken?: string | null;
}

/** Keeps exactly the fields of the tree contract (CLI `tree --json`, `GET /sessions/{id}/tree`). */
export function treeJson(tree: SessionTree): TreeJson {
  return {
    id: tree.id,
    name: tree.name,
    ...(tree.todos !== undefined ? { todos: tree.todos } : {}),
    counts: tree.counts,
    closed: tree.closed,
    version: tree.version,
    updatedAt: tree.updatedAt,
    inProgressContent: tree.inProgressContent,
    subagents: tree.subagents,
    children: tree.children.map(treeJson),
    ...(tree.nextPageToken !== undefined ? { nextPageToken: tree.nextPageToken } : {}),
  };
}
