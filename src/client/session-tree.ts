import type { SessionSnapshot } from '../session';
import type { TodoCounts, TodoList } from '../todo/todo-item';
import type { TreeNodeSource } from './closed-tree-nodes';
import { InvalidInputError } from './errors';
import type { ListOptions, SessionListing, SessionPage } from './session-listing';

/**
 * One session of a tree, with its subagents below it. The root is its own `session` query; a
 * subagent is what its search attributes say (one visibility call gives a whole level), unless
 * its whole list was read (`full`), which `todos` then holds.
 */
export interface SessionTree {
  id: string;
  /** The name its parent gave it; `null` at the root. */
  name: string | null;
  /**
   * The whole list (`null` when the current turn has none). Always there at the root; at a
   * subagent only when its list was read: with `full`, or when visibility did not show the
   * subagent yet and it was read instead. Absent means summarized, not empty.
   */
  todos?: TodoList;
  counts: TodoCounts;
  closed: boolean;
  /** Grows by one with every applied event; `null` when nothing says (a run recorded before sessions indexed themselves). */
  version: number | null;
  /** When it last changed (ISO 8601); a summarized subagent that never changed shows when it started; `null` before any change. */
  updatedAt: string | null;
  /**
   * The contents of its todos in progress, in list order. At a summarized subagent, as its search
   * attribute holds them: each cut to 200 characters, about 1 KB in all (`counts.in_progress`
   * counts every one). `null` when its run does not record them (one started before sessions did).
   */
  inProgressContent: string[] | null;
  /** How many subagents it has spawned; `null` when its run does not record it. */
  subagents: number | null;
  /** Its subagents: at the root in the order it spawned them, below the root in name order unless its list was read. */
  children: SessionTree[];
  /**
   * Only at the root: where the next page of its subagents starts (pass it as `pageToken`), or
   * `null` after the last page (always `null` without `limit`).
   */
  nextPageToken?: string | null;
}

/** Which tree to read: how much of each subagent, and which page of the root's subagents. */
export interface TreeOptions {
  /**
   * Read every subagent's whole list as well: one `session` query per open subagent (a closed
   * one is read once and then kept, its list never changes again). Without it no subagent is
   * queried.
   */
  full?: boolean;
  /**
   * One page of at most this many of the root's direct subagents, an integer from 1 to 1,000;
   * the subagents below each of them are all shown. Without it every page is read.
   */
  limit?: number;
  /** Where the previous page ended: its `nextPageToken`. */
  pageToken?: string;
}

/** Largest page of subagents a tree reads at once: Temporal's own largest visibility page. */
export const TREE_PAGE_LIMIT = 1000;

/** What {@link readTree} reads with: the client's guarded calls. */
export interface TreeReader {
  /** The `session` query. */
  session(sessionId: string): Promise<SessionSnapshot>;
  /** One visibility call per page: the subagents of `parents`. */
  children(parents: readonly string[], page: Pick<ListOptions, 'limit' | 'pageToken'>): Promise<SessionPage>;
  /** A subagent's whole state, read now, or kept from an earlier read when it closed and its listing is unchanged. */
  node(sessionId: string, listed: SessionListing | undefined): Promise<TreeNodeSource>;
}

/**
 * The tree of `sessionId`: its own `session` query, and (sent with it) one visibility call per level for the
 * subagents (their parent search attribute; a level is asked only for the sessions that have
 * spawned any). With `limit`, the root's subagents come one page at a time; the levels below the
 * page are read whole. A subagent the root recorded but visibility does not show yet (it lags
 * the sessions) is read with a query instead, when every page is read; a paged tree shows it once
 * visibility does.
 *
 * @throws InvalidInputError for a `limit` that is not an integer from 1 to 1,000, or a page token
 *   this session's tree did not give.
 */
export async function readTree(reader: TreeReader, sessionId: string, options: TreeOptions = {}): Promise<SessionTree> {
  const page = pageOptions(options);
  const paged = page.limit !== undefined || page.pageToken !== undefined;
  const full = options.full === true;
  // The root's query and the visibility call for its subagents go out together: a tree costs
  // the slower of the two, not their sum. (A session without subagents wastes that one call.)
  const [root, first] = await Promise.all([reader.session(sessionId), reader.children([sessionId], page)]);
  const tree: SessionTree = { ...readNode(root, null), nextPageToken: null };
  if (root.children.length === 0 && !paged) return tree;

  tree.nextPageToken = first.nextPageToken;
  /** The records of the sessions whose state was read: they know their subagents' names and order. */
  const records = new Map<string, SessionSnapshot | TreeNodeSource>([[sessionId, root]]);
  const known = new Map<string, SessionTree>([[sessionId, tree]]);
  let listed = first.sessions;
  let parents: SessionTree[] = [tree];
  const reads: Array<Promise<void>> = [];
  const read = (node: SessionTree, listing: SessionListing | undefined): Promise<void> =>
    reader.node(node.id, listing).then((source) => {
      Object.assign(node, readNode(source, node.name), { children: node.children });
      records.set(node.id, source);
    });

  for (let depth = 1; parents.length > 0; depth++) {
    const level: SessionTree[] = [];
    for (const listing of listed) {
      const parent = listing.parent !== null ? known.get(listing.parent) : undefined;
      // A parent search attribute is a claim the session made about itself: keep only the ones
      // its id agrees with, so no session appears twice or under another's.
      if (parent === undefined || !listing.id.startsWith(`${parent.id}/`) || known.has(listing.id)) continue;
      const node = listedNode(listing, parent.id);
      parent.children.push(node);
      known.set(node.id, node);
      level.push(node);
      if (full || listing.counts === null) reads.push(read(node, listing));
    }
    // What a parent's record names and visibility does not show yet is read from the session.
    for (const parent of parents) {
      const record = records.get(parent.id);
      if (record === undefined || (paged && depth === 1)) continue;
      for (const child of record.children) {
        if (known.has(child.sessionId)) continue;
        const node = listedNode(undefined, parent.id, child.sessionId);
        parent.children.push(node);
        known.set(node.id, node);
        level.push(node);
        reads.push(read(node, undefined));
      }
    }
    await Promise.all(reads.splice(0));
    for (const parent of parents) sortChildren(parent, records.get(parent.id));
    // Only sessions that spawned subagents (or whose runs do not say) are asked about the next level.
    parents = level.filter((node) => node.subagents !== 0);
    listed = parents.length > 0 ? (await reader.children(parents.map((node) => node.id), {})).sessions : [];
  }
  return tree;
}

/** The page options checked: what a person can get wrong is refused with the rule it breaks. */
function pageOptions(options: TreeOptions): Pick<ListOptions, 'limit' | 'pageToken'> {
  const { limit, pageToken } = options;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > TREE_PAGE_LIMIT)) {
    throw new InvalidInputError(`limit must be an integer from 1 to ${TREE_PAGE_LIMIT} (subagents per page), got ${JSON.stringify(limit)}`);
  }
  if (pageToken !== undefined && (typeof pageToken !== 'string' || pageToken === '')) {
    throw new InvalidInputError(`pageToken must be the nextPageToken of the previous page, got ${JSON.stringify(pageToken)}`);
  }
  return { ...(limit !== undefined ? { limit } : {}), ...(pageToken !== undefined ? { pageToken } : {}) };
}

/** A session whose state was read: everything, its whole list included. */
function readNode(source: SessionSnapshot | TreeNodeSource, name: string | null): SessionTree {
  return {
    id: source.sessionId,
    name,
    todos: source.todos,
    counts: source.counts,
    closed: source.closed,
    version: source.version,
    updatedAt: source.updatedAt,
    inProgressContent: (source.todos ?? []).filter((todo) => todo.status === 'in_progress').map((todo) => todo.content),
    subagents: source.children.length,
    children: [],
  };
}

/** A subagent as its listing shows it (or, before it is read, only its id). */
function listedNode(listing: SessionListing | undefined, parentId: string, id = listing?.id ?? ''): SessionTree {
  return {
    id,
    name: id.slice(parentId.length + 1),
    counts: listing?.counts ?? { pending: 0, in_progress: 0, completed: 0 },
    closed: listing?.status === 'closed',
    version: listing?.version ?? null,
    updatedAt: listing?.updatedAt ?? null,
    inProgressContent: listing?.inProgressContent ?? null,
    subagents: listing?.subagents ?? null,
    children: [],
  };
}

/** In the order the parent spawned them when its record was read, else by name. */
function sortChildren(parent: SessionTree, record: SessionSnapshot | TreeNodeSource | undefined): void {
  const order = new Map((record?.children ?? []).map((child, index) => [child.sessionId, index]));
  parent.children.sort((a, b) => (order.get(a.id) ?? Infinity) - (order.get(b.id) ?? Infinity) || (a.name ?? '').localeCompare(b.name ?? ''));
}
