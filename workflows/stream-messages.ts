/**
 * The wire contract of a session's companion stream: its workflow type and its input and result.
 * Publishing and reading use the Workflow Streams protocol of `@temporalio/workflow-streams` (the
 * `__temporal_workflow_stream_publish` signal, the `__temporal_workflow_stream_poll` update, the
 * `__temporal_workflow_stream_offset` query), so any Temporal client can read a stream. Importing
 * this file does not import the workflow.
 */
import { defineQuery } from '@temporalio/workflow';
import type { WorkflowStreamState } from '@temporalio/workflow-streams/workflow';

/** The workflow type of a session's stream. Listings select `agentSession`, so a stream is never listed or counted as a session. */
export const SESSION_STREAM_WORKFLOW_TYPE = 'sessionStream';

/**
 * Input of a stream run. A fresh run gets the session id and the offset to begin at (where the
 * session's previous stream ended, so offsets never go back); a run continued from another
 * carries that run's log (cut to its newest entries) in `state`.
 */
export interface SessionStreamInput {
  sessionId: string;
  /** The offset of the first entry of a fresh run (default 0). */
  firstOffset?: number;
  /** The log carried from the run before (continue-as-new only). */
  state?: WorkflowStreamState;
  /** How long the stream stays open without a new entry (default 10 minutes; 1 s to 1 day). */
  idleMs?: number;
}

/** What a stream run ends with when it closes after a quiet while: the offset its next entry would have had. */
export interface SessionStreamResult {
  nextOffset: number;
}

/** Which offsets a stream holds: from `first` (older ones were truncated) up to `next` (excluded), the offset of the entry to come. */
export interface StreamRange {
  first: number;
  next: number;
}

/** Query `stream_range`: the offsets the stream holds now, so a reader knows what it can still read and what is gone. */
export const streamRangeQuery = defineQuery<StreamRange>('stream_range');
