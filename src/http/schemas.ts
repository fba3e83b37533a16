import { z } from '@hono/zod-openapi';
import { todoStatusSchema, todoWriteArgsSchema, type TodoBounds } from '../todo';

/**
 * Response and request schemas of the HTTP API, for the OpenAPI document. The `todo_write`
 * body is the very schema the workflow validates with; the others describe what the session
 * query and the client return.
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
  const userMessage = z.object({ text: z.string() }).strict().openapi('UserMessage');
  const messageResult = z
    .object({
      messageId: z.number().int(),
      queued: z.boolean().openapi({ description: 'false: it starts a turn now; true: it waits for the running turn to end.' }),
      ahead: z.number().int().openapi({ description: 'Messages ahead of it.' }),
    })
    .openapi('UserMessageResult');
  const decision = z.object({ reason: z.string().max(2000).optional() }).strict().openapi('ToolDecision');
  const decisionResult = z.object({ callId: z.string(), decision: z.enum(['approved', 'denied']) }).openapi('ToolDecisionResult');
  const usageReport = z
    .object({ session: usage, tree: usage.openapi({ description: 'Summed over the session and every subagent below it.' }) })
    .openapi('UsageReport');
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
  const tree = z
    .object({ id: z.string(), todos: todoList, counts, children: z.array(z.object({}).passthrough().openapi({ description: 'A SessionTree, recursively.' })) })
    .openapi('SessionTree');
  const listing = z
    .object({
      id: z.string(),
      status: z.enum(['running', 'closed']),
      parent: z.string().nullable(),
      counts: counts.nullable(),
      version: z.number().int().nullable(),
      updatedAt: z.string(),
    })
    .openapi('SessionListing');
  const error = z
    .object({
      error: z.string().openapi({ description: 'One sentence saying what happened and what to change.' }),
      code: z.string().openapi({ description: 'What kind of failure it is, to branch on (never the sentence): rejected, session-not-found, outcome-unknown, …', example: 'rejected' }),
      rule: z.string().optional(),
      problems: z.array(z.object({ rule: z.string(), path: z.string(), detail: z.string() })).optional(),
      updateId: z.string().optional().openapi({ description: 'For a change sent but not answered: send it again with Idempotency-Key: <updateId> to apply it at most once.' }),
    })
    .openapi('Error');
  const start = z.object({ id: z.string().min(1), task: z.string().optional() }).openapi('StartSession');
  const started = z.object({ sessionId: z.string(), runId: z.string(), created: z.boolean() }).openapi('Started');
  const spawn = z.object({ name: z.string(), task: z.string().optional() }).openapi('SpawnSubagent');
  const spawned = z.object({ sessionId: z.string(), name: z.string() }).openapi('Subagent');
  const timeline = z
    .object({
      steps: z.array(
        z.object({
          eventId: z.number().int(),
          time: z.string().nullable(),
          type: z.string(),
          run: z.number().int(),
          todos: todoList,
          version: z.number().int(),
          turn: z.number().int(),
          turnOpen: z.boolean(),
        }),
      ),
    })
    .openapi('Timeline');
  return {
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
    usage,
    turnOutcome,
    transcript,
    userMessage,
    messageResult,
    decision,
    decisionResult,
    usageReport,
    todoWrite: todoWriteArgsSchema(bounds).openapi('TodoWriteArgs'),
  };
}
