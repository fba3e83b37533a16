import type { TodoCounts, TodoList } from '../todo';
import type { SessionTree } from './session-client';

/** The JSON shape of a session tree for other programs: `{ id, todos, counts, children }` at every level. */
export interface TreeJson {
  id: string;
  todos: TodoList;
  counts: TodoCounts;
  children: TreeJson[];
}

/** Keeps exactly the fields of the tree contract (CLI `tree --json`, `GET /sessions/{id}/tree`). */
export function treeJson(tree: SessionTree): TreeJson {
  return { id: tree.id, todos: tree.todos, counts: tree.counts, children: tree.children.map(treeJson) };
}
