import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes';
import { temporal as proto } from '@temporalio/proto';
import { UNSEARCHABLE_CHARACTER, type ForkOrigin } from '../session';
import type { TodoCounts } from '../todo';
import { InvalidInputError } from './errors';
import { grpcCode } from './transient-errors';
import { SESSION_WORKFLOW_TYPE } from '../../workflows/messages';

const GRPC_INVALID_ARGUMENT = 3;

/** One line of a listing of sessions. */
export interface SessionListing {
  id: string;
  status: 'running' | 'closed';
  /** The parent session id, for a subagent. */
  parent: string | null;
  /** `null` for a session that has not indexed itself (started before sessions did, and not yet continued as new). */
  counts: TodoCounts | null;
  version: number | null;
  /** When the session last changed (ISO 8601), else when it started. */
  updatedAt: string;
  /**
   * The contents of its todos in progress, in list order, as its search attribute holds them:
   * each cut to 200 characters, about 1 KB in all (`counts.in_progress` counts every one).
   * `null` for a run that does not record them (one started before sessions did).
   */
  inProgressContent: string[] | null;
  /** How many subagents it has spawned; `null` for a run that does not record it. */
  subagents: number | null;
  /** For a fork: the session, run and history event it was forked from (its memo); `null` otherwise. */
  forkedFrom: ForkOrigin | null;
}

/** Which sessions to list, and which page. */
export interface ListOptions {
  /** Only sessions that are still open. */
  open?: boolean;
  /** Only the subagents of this session. */
  parent?: string;
  /** Only sessions with at least one todo in progress. */
  inProgress?: boolean;
  /** At most this many (one page); without it every page is read. */
  limit?: number;
  /** Where the previous page ended (its `nextPageToken`). */
  pageToken?: string;
}

/** A page of sessions and where the next one starts (`null` after the last). */
export interface SessionPage {
  sessions: SessionListing[];
  nextPageToken: string | null;
}

/** The visibility query that selects the sessions of `taskQueue` that `options` asks for. */
export function listQuery(taskQueue: string, options: ListOptions): string {
  const terms = [`WorkflowType = ${quote(SESSION_WORKFLOW_TYPE)}`, `TaskQueue = ${quote(taskQueue)}`];
  terms.push(options.open === true ? `ExecutionStatus = 'Running'` : `ExecutionStatus != 'ContinuedAsNew'`);
  if (options.parent !== undefined) terms.push(`AgentSessionParent = ${quote(options.parent)}`);
  if (options.inProgress === true) terms.push('AgentSessionInProgress > 0');
  return terms.join(' AND ');
}

/**
 * The visibility query that selects the subagents of `parents` by their parent search attribute,
 * whatever their task queue (a subagent runs on its parent's). It names no task queue on purpose:
 * with one, SQL visibility may walk the index of the queue (every session of it) instead of the
 * index of the parent attribute (just these subagents).
 */
export function childrenQuery(parents: readonly string[]): string {
  if (parents.length === 0) throw new RangeError('childrenQuery needs at least one parent');
  const parent = parents.length === 1 ? `AgentSessionParent = ${quote(parents[0]!)}` : `AgentSessionParent IN (${parents.map(quote).join(', ')})`;
  return [`WorkflowType = ${quote(SESSION_WORKFLOW_TYPE)}`, `ExecutionStatus != 'ContinuedAsNew'`, parent].join(' AND ');
}

/** How many parents one {@link listChildren} call names at most: a level wider than this takes more calls. */
export const PARENTS_PER_CALL = 100;

/**
 * Lists the subagents of `parents` with one visibility call per page (and per
 * {@link PARENTS_PER_CALL} parents): a page of at most `limit`, or every page without it. The
 * page token belongs to these parents: any other is refused with an {@link InvalidInputError}.
 */
export async function listChildren(client: Client, parents: readonly string[], options: Pick<ListOptions, 'limit' | 'pageToken'> = {}): Promise<SessionPage> {
  if (parents.length <= PARENTS_PER_CALL) return listByQuery(client, childrenQuery(parents), options, undefined, 'a tree');
  if (options.limit !== undefined || options.pageToken !== undefined) throw new RangeError(`a page of subagents names at most ${PARENTS_PER_CALL} parents`);
  const pages = [];
  for (let start = 0; start < parents.length; start += PARENTS_PER_CALL) pages.push(listChildren(client, parents.slice(start, start + PARENTS_PER_CALL)));
  return { sessions: (await Promise.all(pages)).flatMap((page) => page.sessions), nextPageToken: null };
}

/**
 * Lists sessions with one visibility call per page: what a listing shows (open or closed,
 * parent, counts, version, last update, the todos in progress) is in the search attributes every
 * session keeps up to date, so no session is queried. Newest first.
 *
 * @param unindexed how to read a session that has not indexed itself yet (its counts and version
 *   then come from it, as before sessions indexed themselves); `undefined` lists it without.
 */
export async function listSessions(
  client: Client,
  taskQueue: string,
  options: ListOptions = {},
  unindexed?: (id: string, running: boolean) => Promise<Partial<SessionListing> | undefined>,
): Promise<SessionPage> {
  if (options.parent?.includes(UNSEARCHABLE_CHARACTER)) {
    // Temporal's visibility would never answer such a query; no session created since has such a parent.
    throw new InvalidInputError(`the parent ${JSON.stringify(options.parent.slice(0, 80))} holds U+0000, which Temporal's visibility cannot search for`);
  }
  return listByQuery(client, listQuery(taskQueue, options), options, unindexed, 'a listing');
}

/** Who gives page tokens, for the sentences that refuse one. */
type TokenGiver = 'a listing' | 'a tree';

async function listByQuery(
  client: Client,
  query: string,
  options: Pick<ListOptions, 'limit' | 'pageToken'>,
  unindexed: ((id: string, running: boolean) => Promise<Partial<SessionListing> | undefined>) | undefined,
  giver: TokenGiver,
): Promise<SessionPage> {
  const sessions: SessionListing[] = [];
  let token: Uint8Array | undefined = options.pageToken !== undefined ? readPageToken(options.pageToken, query, giver) : undefined;
  for (;;) {
    const wanted = options.limit !== undefined ? options.limit - sessions.length : 1000;
    const answer = await client.connection.workflowService
      .listWorkflowExecutions({
        namespace: client.options.namespace,
        query,
        pageSize: Math.min(wanted, 1000),
        ...(token !== undefined ? { nextPageToken: token } : {}),
      })
      .catch((error: unknown) => {
        if (options.pageToken !== undefined && grpcCode(error) === GRPC_INVALID_ARGUMENT) {
          throw new InvalidInputError(`the page token ${JSON.stringify(options.pageToken.slice(0, 40))} is no longer valid; start again without it`);
        }
        throw error;
      });
    for (const execution of answer.executions ?? []) sessions.push(await listing(execution, unindexed));
    token = answer.nextPageToken !== null && answer.nextPageToken !== undefined && answer.nextPageToken.length > 0 ? answer.nextPageToken : undefined;
    if (token === undefined || (options.limit !== undefined && sessions.length >= options.limit)) break;
  }
  return { sessions, nextPageToken: token !== undefined ? pageToken(token, query) : null };
}

/**
 * A page token as this client gives it: Temporal's own token with a digest of the query it
 * belongs to, so a token that was not given, or is used with other filters, is refused here
 * with a clear sentence instead of reaching Temporal.
 */
function pageToken(temporalToken: Uint8Array, query: string): string {
  return `p1.${Buffer.from(JSON.stringify({ t: Buffer.from(temporalToken).toString('base64'), q: digest(query) })).toString('base64url')}`;
}

function readPageToken(token: string, query: string, giver: TokenGiver): Uint8Array {
  const refuse = (why: string): never => {
    throw new InvalidInputError(`the page token ${JSON.stringify(token.slice(0, 40))} ${why}; start again without it`);
  };
  const foreign = `is not one ${giver} gave`;
  if (!token.startsWith('p1.')) refuse(foreign);
  let parsed: { t?: unknown; q?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(token.slice(3), 'base64url').toString('utf8')) as { t?: unknown; q?: unknown };
  } catch {
    return refuse(foreign);
  }
  if (typeof parsed.t !== 'string' || typeof parsed.q !== 'string') refuse(foreign);
  if (parsed.q !== digest(query)) refuse(giver === 'a tree' ? "belongs to another session's tree" : 'belongs to a listing with other filters');
  return Buffer.from(parsed.t as string, 'base64');
}

/** A string literal of Temporal's list-filter language. */
function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

async function listing(
  execution: proto.api.workflow.v1.IWorkflowExecutionInfo,
  unindexed: ((id: string, running: boolean) => Promise<Partial<SessionListing> | undefined>) | undefined,
): Promise<SessionListing> {
  const id = execution.execution?.workflowId ?? '';
  const running = execution.status === proto.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
  const attributes = Object.fromEntries(
    decodeTypedSearchAttributes(execution.searchAttributes?.indexedFields)
      .getAll()
      .map((pair) => [pair.key.name, pair.value as unknown]),
  );
  const started = timestamp(execution.startTime) ?? new Date(0);
  const version = attributes.AgentSessionVersion;
  // A run that records the number of subagents records the contents in progress too: without
  // the attribute, its list is empty (Temporal removes an attribute set to []).
  const subagents = typeof attributes.AgentSessionSubagents === 'number' ? attributes.AgentSessionSubagents : null;
  const content = attributes.AgentSessionInProgressContent;
  const base: SessionListing = {
    id,
    status: running && attributes.AgentSessionClosed !== true ? 'running' : 'closed',
    parent: typeof attributes.AgentSessionParent === 'string' ? attributes.AgentSessionParent : null,
    counts: null,
    version: null,
    updatedAt: (attributes.AgentSessionUpdatedAt instanceof Date ? attributes.AgentSessionUpdatedAt : started).toISOString(),
    inProgressContent: subagents === null ? null : Array.isArray(content) ? content.filter((item): item is string => typeof item === 'string') : [],
    subagents,
    forkedFrom: forkedFromMemo(execution.memo?.fields?.forkedFrom),
  };
  if (typeof version !== 'number') return { ...base, ...(unindexed !== undefined ? await unindexed(id, running) : {}) };
  return {
    ...base,
    counts: { pending: count(attributes.AgentSessionPending), in_progress: count(attributes.AgentSessionInProgress), completed: count(attributes.AgentSessionCompleted) },
    version,
  };
}

/** The `forkedFrom` memo a fork is started with, when it has that shape. */
function forkedFromMemo(payload: proto.api.common.v1.IPayload | null | undefined): ForkOrigin | null {
  if (payload === null || payload === undefined) return null;
  let value: Partial<Record<keyof ForkOrigin, unknown>> | null;
  try {
    value = defaultPayloadConverter.fromPayload(payload);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { id, runId, eventId } = value;
  return typeof id === 'string' && typeof runId === 'string' && typeof eventId === 'number' ? { id, runId, eventId } : null;
}

function count(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

function timestamp(time: { seconds?: unknown; nanos?: unknown } | null | undefined): Date | undefined {
  if (time === null || time === undefined) return undefined;
  return new Date(Number(time.seconds ?? 0) * 1000 + Math.floor(Number(time.nanos ?? 0) / 1e6));
}
