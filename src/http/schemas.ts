import { z } from '@hono/zod-openapi';
import { ERROR_CODES } from '../client';
import { MAX_TASK_LENGTH, MAX_USER_MESSAGE_CHARS, NEW_SESSION_ID_PATTERN, SUBAGENT_NAME_PATTERN } from '../session';
import { MODEL_STREAM_EVENT_TYPES } from '../session/model-stream';
import { NOT_BLANK_PATTERN, REJECTION_RULES, todoStatusSchema, todoWriteArgsSchema, type TodoBounds } from '../todo';
import { HTTP_REFUSAL_CODES } from './http-errors';

/**
 * Response and request schemas of the HTTP API, for the OpenAPI document. The `todo_write`
 * body is the very schema the workflow validates with; the others describe what the session
 * query and the client return. Each rule a request must meet that JSON Schema can state is
 * stated from the constant the session's own check uses (a subagent's name, a message that is
 * not blank, the longest task), never from a copy; where the session judges a rule itself (and
 * answers 422 naming it), the schema states it without checking it here.
 */
export function apiSchemas(bounds?: TodoBounds) {
  const todoItem = z.object({ content: z.string(), status: todoStatusSchema }).openapi('TodoItem');
  const todoList = z.array(todoItem).nullable().openapi('TodoList', { description: 'The current list, or null when the current turn has none.' });
  const counts = z
    .object({ pending: z.number().int(), in_progress: z.number().int(), completed: z.number().int() })
    .openapi('TodoCounts');
  const child = z
    .object({ name: z.string(), sessionId: z.string(), task: z.string().nullable(), closed: z.boolean(), counts: counts.nullable() })
    .openapi('ChildSession');
  const usage = z
    .object({
      prompt_tokens: z.number().int(),
      completion_tokens: z.number().int(),
      total_tokens: z.number().int(),
      model_calls: z.number().int(),
      output_chars: z.number().int().openapi({ description: "Characters of the model's output: its text and every tool call's arguments." }),
      todo_write_chars: z.number().int().openapi({ description: 'Of those, characters of todo_write arguments: what rewriting the whole list costs.' }),
    })
    .openapi('Usage');
  const turnOutcome = z
    .object({
      turn: z.number().int(),
      messageId: z.number().int().openapi({ description: 'The message that started the turn.' }),
      reason: z.enum(['completed', 'interrupted', 'max-steps', 'model-error', 'closed']),
      answer: z.string().nullable().openapi({ description: "The model's final answer, when it gave one." }),
      detail: z.string().nullable().openapi({ description: 'What went wrong, for a turn that did not complete.' }),
      endedAt: z.string().nullable(),
      traceId: z
        .string()
        .regex(/^[0-9a-f]{32}$/)
        .optional()
        .openapi({ description: "The id of the turn's trace, when the request that began it was traced (absent otherwise)." }),
    })
    .openapi('TurnOutcome');
  const pendingApproval = z
    .object({
      callId: z.string().openapi({ description: "The model's id of the call: what POST …/approvals/{callId}/approve and /deny name." }),
      name: z.string(),
      arguments: z.string().openapi({ description: 'The arguments as the model sent them (JSON text).' }),
      since: z.string().nullable(),
    })
    .openapi('PendingApproval');
  const withheldTool = z
    .object({
      name: z.string().openapi({ description: 'The tool as the model would see it, mcp__<server>__<tool>.' }),
      reason: z.string(),
      pinned: z.string().openapi({ description: 'The hash of the definition the session first offered (and trusts).' }),
      offered: z.string().openapi({ description: 'The hash of the definition the server offers now.' }),
    })
    .openapi('WithheldTool');
  const agentStatus = z
    .object({
      activity: z
        .object({ state: z.enum(['idle', 'starting', 'calling-model', 'running-tools', 'waiting-approval']) })
        .passthrough()
        .openapi({ description: 'What the loop does now; beside `state`: messageId (starting), turn and step, tools (running-tools), callIds (waiting-approval).' }),
      queued: z.number().int().openapi({ description: 'Messages waiting for a turn.' }),
      pendingApprovals: z.array(pendingApproval),
      lastTurn: turnOutcome.nullable(),
      recentTurns: z.array(turnOutcome).openapi({ description: 'The turns that ended last, oldest first (at most 12; lastTurn is the newest): how a turn ended, even after later ones.' }),
      withheldTools: z
        .array(withheldTool)
        .optional()
        .openapi({ description: 'Tools the last turn did not offer because their definitions changed since the session first offered them; POST …/tools/accept trusts them. Absent from sessions on a build before MCP tools.' }),
      revision: z.number().int().openapi({ description: "Grows with every change of the agent's state; the event stream sends a `session` event when it moves." }),
    })
    .openapi('AgentStatus');
  const toolCall = z
    .object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) })
    .openapi('ToolCall');
  const chatMessage = z
    .object({
      role: z.enum(['system', 'user', 'assistant', 'tool']),
      content: z.string().nullable(),
      tool_calls: z.array(toolCall).optional().openapi({ description: 'For an assistant message: the tool calls it made.' }),
      tool_call_id: z.string().optional().openapi({ description: 'For a tool message: the call it answers.' }),
    })
    .openapi('ChatMessage', { description: 'A message of the conversation, in the chat-completions wire format.' });
  const transcript = z
    .object({
      sessionId: z.string(),
      messages: z.array(chatMessage),
      compacted: z.boolean().openapi({ description: 'Whether older messages were dropped to fit the context.' }),
      usage,
      lastTurn: turnOutcome.nullable(),
      recentTurns: z
        .array(turnOutcome)
        .optional()
        .openapi({ description: 'The turns that ended last, oldest first (at most 12), each with its traceId when it was traced.' }),
    })
    .openapi('Transcript');
  const userMessage = z
    .object({
      text: z.string().meta({ pattern: NOT_BLANK_PATTERN, maxLength: MAX_USER_MESSAGE_CHARS, description: 'The message: not blank (empty-message), at most that many characters (message-too-long).' }),
    })
    .strict()
    .openapi('UserMessage');
  const messageResult = z
    .object({
      messageId: z.number().int(),
      queued: z.boolean().openapi({ description: 'false: it starts a turn now; true: it waits for the running turn to end.' }),
      ahead: z.number().int().openapi({ description: 'Messages ahead of it.' }),
    })
    .openapi('UserMessageResult');
  const decision = z.object({ reason: z.string().max(2000).optional() }).strict().openapi('ToolDecision');
  const decisionResult = z.object({ callId: z.string(), decision: z.enum(['approved', 'denied']) }).openapi('ToolDecisionResult');
  const toolAccept = z
    .object({ names: z.array(z.string().min(1)).min(1).optional().openapi({ description: 'The withheld tools to trust again; left out, every one.' }) })
    .strict()
    .openapi('ToolAccept');
  const toolAcceptResult = z.object({ accepted: z.array(z.string()) }).openapi('ToolAcceptResult');
  const usageReport = z
    .object({ session: usage, tree: usage.openapi({ description: 'Summed over the session and every subagent below it.' }) })
    .openapi('UsageReport');
  const forkOrigin = z
    .object({
      id: z.string().openapi({ description: 'The session it was forked from.' }),
      runId: z.string().openapi({ description: 'The run of that session’s continue-as-new chain.' }),
      eventId: z.number().int().openapi({ description: 'The history event of that run, as `temporal workflow show` numbers it.' }),
    })
    .openapi('ForkOrigin');
  const session = z
    .object({
      sessionId: z.string(),
      turn: z.number().int(),
      turnOpen: z.boolean(),
      todos: todoList,
      counts,
      version: z.number().int().openapi({ description: 'Grows by one with every applied event.' }),
      closed: z.boolean(),
      parent: z.object({ sessionId: z.string(), name: z.string() }).nullable(),
      task: z.string().nullable(),
      children: z.array(child),
      updatedAt: z.string().nullable(),
      usage,
      forkedFrom: forkOrigin.nullable().openapi({ description: 'For a fork: where it was forked from; null otherwise.' }),
      forkedChildren: z.array(child).openapi({ description: 'For a fork: the subagents its source had open at the fork point, as the source knew them then (not copied, not restarted).' }),
      agent: agentStatus,
    })
    .openapi('Session');
  const writeResult = z
    .object({
      pending: z.number().int(),
      in_progress: z.number().int(),
      completed: z.number().int(),
      message: z.string().openapi({ example: 'Updated todo list: 2 pending, 1 in progress, 0 completed' }),
      version: z.number().int(),
    })
    .openapi('TodoWriteResult');
  const inProgressContent = z
    .array(z.string())
    .nullable()
    .openapi({
      description:
        'The contents of its todos in progress, in list order. For a summarized subagent, as its search attribute holds them: each cut to 200 characters, ' +
        'about 1 KB in all (counts.in_progress counts every one). null for a run that does not record them (started before sessions did).',
    });
  const subagents = z.number().int().nullable().openapi({ description: 'How many subagents it has spawned; null for a run that does not record it.' });
  const tree = z
    .object({
      id: z.string(),
      name: z.string().nullable().openapi({ description: 'The name its parent gave it; null at the root.' }),
      todos: todoList.optional().openapi({
        description: "The whole list. Always at the root; at a subagent only when its list was read (?full=true, or visibility did not show it yet). Absent means summarized, not empty.",
      }),
      counts,
      closed: z.boolean(),
      version: z.number().int().nullable(),
      updatedAt: z.string().nullable().openapi({ description: 'When it last changed (ISO 8601); a summarized subagent that never changed shows when it started.' }),
      inProgressContent,
      subagents,
      children: z.array(z.object({}).passthrough().openapi({ description: 'A SessionTree, recursively: its subagents (at the root in spawn order, below it in name order unless read).' })),
      nextPageToken: z
        .string()
        .nullable()
        .optional()
        .openapi({ description: "Only at the root: pass it as ?pageToken= for the next page of the root's subagents; null after the last page." }),
    })
    .openapi('SessionTree');
  const listing = z
    .object({
      id: z.string(),
      status: z.enum(['running', 'closed']),
      parent: z.string().nullable(),
      counts: counts.nullable(),
      version: z.number().int().nullable(),
      updatedAt: z.string(),
      inProgressContent,
      subagents,
      forkedFrom: forkOrigin.nullable(),
    })
    .openapi('SessionListing');
  const error = z
    .object({
      error: z.string().openapi({ description: 'One sentence saying what happened and what to change.' }),
      code: z.enum([...ERROR_CODES, ...HTTP_REFUSAL_CODES, 'internal-error']).openapi({ description: 'What kind of failure it is, to branch on (never the sentence).', example: 'rejected' }),
      rule: z.enum(REJECTION_RULES).optional().openapi({ description: 'For a refused request (code rejected): the rule it broke first.' }),
      problems: z.array(z.object({ rule: z.enum(REJECTION_RULES), path: z.string(), detail: z.string() })).optional(),
      updateId: z.string().optional().openapi({ description: 'For a change sent but not answered: send it again with Idempotency-Key: <updateId> to apply it at most once.' }),
    })
    .openapi('Error');
  const start = z
    .object({
      id: z.string().min(1).meta({ pattern: NEW_SESSION_ID_PATTERN, description: 'The new session\'s id: not blank, without "/" or U+0000 (invalid-session-id).' }),
      task: z.string().max(MAX_TASK_LENGTH).optional(),
    })
    .openapi('StartSession');
  const started = z.object({ sessionId: z.string(), runId: z.string(), created: z.boolean() }).openapi('Started');
  const spawn = z
    .object({
      name: z.string().meta({ pattern: SUBAGENT_NAME_PATTERN, description: 'Unique within the session: 1-64 letters, digits, ".", "_" or "-", beginning with a letter or digit (subagent-name).' }),
      task: z.string().meta({ maxLength: MAX_TASK_LENGTH }).optional(),
    })
    .openapi('SpawnSubagent');
  const spawned = z.object({ sessionId: z.string(), name: z.string() }).openapi('Subagent');
  const fork = z
    .object({
      newId: z.string().min(1).openapi({ description: 'The id of the new session: not taken, not blank, without "/" or U+0000.', example: 'build-42-retry', pattern: NEW_SESSION_ID_PATTERN }),
      at: z
        .object({
          eventId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ description: 'A history event id of the run, as `temporal workflow show` and the timeline number it.' }),
          runId: z.string().min(1).optional().openapi({ description: 'The run of the continue-as-new chain (the timeline’s runId); the current run when absent.' }),
        })
        .strict()
        .optional(),
      beforeTurn: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().openapi({ description: 'Fork at the state just before turn N began (the event before its turn/start).' }),
    })
    .strict()
    .refine((body) => body.at === undefined || body.beforeTurn === undefined, { message: '"at" and "beforeTurn" exclude each other' })
    // The refinement above, as JSON Schema says it.
    .openapi('ForkRequest', { not: { required: ['at', 'beforeTurn'] } });
  const forked = z
    .object({
      sessionId: z.string(),
      runId: z.string(),
      forkedFrom: forkOrigin,
      forkedChildren: z.array(child),
      session,
    })
    .openapi('Forked');
  const timeline = z
    .object({
      steps: z.array(
        z.object({
          eventId: z.number().int(),
          time: z.string().nullable(),
          type: z.string(),
          run: z.number().int(),
          runId: z.string().openapi({ description: 'The id of that run: with eventId, a fork point (POST /sessions/{id}/fork).' }),
          todos: todoList,
          version: z.number().int(),
          turn: z.number().int(),
          turnOpen: z.boolean(),
        }),
      ),
    })
    .openapi('Timeline');
  const sessionEvent = z
    .discriminatedUnion('event', [
      sseEvent('session', 'The session JSON (as GET /sessions/{id} answers it); id: its version', 'Session'),
      sseEvent('problem', 'The session cannot be read right now (an Error); the stream goes on', 'Error'),
    ])
    .openapi('SessionEvent', { description: 'One event of GET /sessions/{id}/events, as a reader parses it.' });
  const streamEvent = z
    .discriminatedUnion('event', [
      sseEvent('ready', 'Where the reading begins: {"sessionId", "from", "end", "note"?}'),
      sseEvent(MODEL_STREAM_EVENT_TYPES, 'One entry of the stream, a model event whose type is the event\'s name (see docs/streaming.md); id: its offset'),
      sseEvent('gap', 'Entries the stream no longer holds: {"from", "to"}'),
      sseEvent('malformed', 'An entry that is not a model event, passed over: {"offset", "error"}; id: its offset'),
      sseEvent('problem', 'The stream cannot be read right now (an Error); the reading goes on', 'Error'),
    ])
    .openapi('StreamEvent', { description: "One event of GET /sessions/{id}/stream, as a reader parses it." });
  return {
    sessionEvent,
    streamEvent,
    todoItem,
    todoList,
    counts,
    session,
    writeResult,
    tree,
    listing,
    error,
    start,
    started,
    spawn,
    spawned,
    timeline,
    fork,
    forked,
    usage,
    turnOutcome,
    transcript,
    userMessage,
    messageResult,
    decision,
    decisionResult,
    toolAccept,
    toolAcceptResult,
    usageReport,
    todoWrite: todoWriteArgsSchema(bounds).openapi('TodoWriteArgs'),
  };
}

/**
 * One Server-Sent Event of type `name` as a reader parses it (the shape OpenAPI 3.2 gives an
 * event and Schemathesis checks: `event`, `data`, `id`): its data is JSON text, of the component
 * `data` when given. A reader keeps the last `id` it saw, so an event sent without one (a
 * `problem`) is read with the one before it: `id` is allowed on every event.
 */
function sseEvent(name: string | readonly [string, ...string[]], description: string, data?: string) {
  return z
    .object({
      event: typeof name === 'string' ? z.literal(name) : z.enum(name),
      // JSON Schema's words for "a string holding JSON of that schema" (annotations, not checked).
      data: z.string().meta({
        description,
        contentMediaType: 'application/json',
        ...(data !== undefined ? { contentSchema: { $ref: `#/components/schemas/${data}` } } : {}),
      }),
      id: z.string().regex(/^[0-9]+$/).optional(),
    })
    .strict();
}
