import type { SessionSnapshot } from '../session';
import type { TodoCounts, TodoList } from '../todo/todo-item';
import { jsonUtf8Length } from '../todo/utf8';

/** What a tree shows of one session whose state was read, and the subagents its record names. */
export interface TreeNodeSource {
  sessionId: string;
  todos: TodoList;
  counts: TodoCounts;
  closed: boolean;
  version: number;
  updatedAt: string | null;
  children: ReadonlyArray<{ sessionId: string; name: string }>;
}

/** Bytes of lists kept by default: a few hundred large closed lists, thousands of small ones. */
export const CLOSED_TREE_NODES_BYTES = 16 * 1024 * 1024;

/**
 * What the tree shows of closed sessions, so that a full tree (`tree --full`) reads a finished
 * subagent once instead of querying it on every call (a query to a closed workflow replays its whole history on the
 * worker). Exact, not a guess about freshness: a closed session takes no write and no turn, so its
 * list and counts never change again, and an entry is used only while the listing shows the same
 * version and the same last change the entry was read at (a spawn recorded after the close, or
 * an id reused after Temporal's retention deleted the old one, misses and is read again). Open
 * sessions are never kept. Bounded by the bytes of the lists it holds; the least recently used
 * entry goes first.
 */
export class ClosedTreeNodes {
  private readonly entries = new Map<string, { node: TreeNodeSource; version: number; updatedAt: number; bytes: number }>();
  private bytes = 0;

  constructor(private readonly maxBytes = CLOSED_TREE_NODES_BYTES) {}

  /** The node read earlier for this session at this version and last change, if it is kept. */
  get(sessionId: string, version: number, updatedAt: string): TreeNodeSource | undefined {
    const entry = this.entries.get(sessionId);
    if (entry === undefined || entry.version !== version || entry.updatedAt !== Date.parse(updatedAt)) return undefined;
    this.entries.delete(sessionId);
    this.entries.set(sessionId, entry);
    return entry.node;
  }

  /** Keeps what the tree shows of `snapshot` when the session is closed; an open one is not kept. */
  remember(snapshot: SessionSnapshot): void {
    if (!snapshot.closed || snapshot.updatedAt === null) return;
    const node: TreeNodeSource = {
      sessionId: snapshot.sessionId,
      todos: snapshot.todos,
      counts: snapshot.counts,
      closed: true,
      version: snapshot.version,
      updatedAt: snapshot.updatedAt,
      children: snapshot.children.map(({ sessionId, name }) => ({ sessionId, name })),
    };
    // The list dominates; ids and names are counted with a margin per child.
    const bytes = jsonUtf8Length(snapshot.todos) + snapshot.sessionId.length + 64 * (node.children.length + 1);
    if (bytes > this.maxBytes) return;
    this.forget(snapshot.sessionId);
    this.entries.set(snapshot.sessionId, { node, version: snapshot.version, updatedAt: Date.parse(snapshot.updatedAt), bytes });
    this.bytes += bytes;
    for (const [id] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.forget(id);
    }
  }

  /** How many sessions are kept. */
  get size(): number {
    return this.entries.size;
  }

  private forget(sessionId: string): void {
    const entry = this.entries.get(sessionId);
    if (entry === undefined) return;
    this.entries.delete(sessionId);
    this.bytes -= entry.bytes;
  }
}
