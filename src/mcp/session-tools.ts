import { TODO_WRITE_TOOL_NAME, todoWriteToolDefinition, type TodoPolicy } from '../todo';

/** The tool that reads the list back, for an agent whose context was compacted. */
export const TODO_READ_TOOL_NAME = 'todo_read';

/** A tool as MCP's `tools/list` describes it. */
export interface McpToolDescription {
  name: string;
  description: string;
  inputSchema: { type: 'object' } & Record<string, unknown>;
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
}

const TODO_READ_DESCRIPTION =
  'Read the current todo list of this session: every item with its status, and the counts. Call it after your ' +
  'context was compacted or when you resume work, before the next todo_write, so the list you send is complete.';

/** The tools of each policy, built on first use. */
const TOOLS_BY_POLICY = new Map<boolean, McpToolDescription[]>();

/**
 * The two tools a session serves over MCP. `todo_write` is word for word the definition
 * `agent-sessions tool-definition` prints for the policy (its name, description and JSON Schema
 * come from the same function), so an MCP client is shown exactly what the session enforces.
 *
 * Built once per policy and shared, frozen (a caller that wants to change it copies it first):
 * the HTTP endpoint builds a server for every request of the 2025 protocol, and generating
 * `todo_write`'s JSON Schema from the zod schema each time cost about 0.1 ms of CPU a request,
 * a third or more of what its `tools/call` spent beyond `POST …/todo_write`.
 */
export function sessionTools(policy: TodoPolicy): McpToolDescription[] {
  let tools = TOOLS_BY_POLICY.get(policy.allowParallelInProgress);
  if (tools === undefined) {
    tools = deepFreeze(buildSessionTools(policy));
    TOOLS_BY_POLICY.set(policy.allowParallelInProgress, tools);
  }
  return tools;
}

function buildSessionTools(policy: TodoPolicy): McpToolDescription[] {
  const { function: write } = todoWriteToolDefinition(policy);
  return [
    {
      name: TODO_WRITE_TOOL_NAME,
      description: write.description,
      inputSchema: write.parameters as McpToolDescription['inputSchema'],
      // Replacing the list with the same list changes nothing; a different list replaces the old one.
      annotations: { title: 'Write the todo list', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    {
      name: TODO_READ_TOOL_NAME,
      description: TODO_READ_DESCRIPTION,
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { title: 'Read the todo list', readOnlyHint: true, openWorldHint: false },
    },
  ];
}

/** Freezes a plain JSON value and everything in it, so a shared one cannot be changed by one of its users. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * What the server tells the model about itself (`instructions` of `initialize`): keep the plan
 * here, send the whole list each time, read it back after compaction.
 */
export function sessionInstructions(sessionId: string): string {
  return (
    `This server keeps your plan in the durable agent session "${sessionId}". Use its todo_write tool for ` +
    'every plan you make instead of any built-in todo or plan tool, so the plan survives compaction, restarts and ' +
    'hand-offs and others can read it. Each todo_write sends the ENTIRE list and replaces the previous one; a write ' +
    'that breaks a rule is refused with the rule and the offending value: fix that and send the whole list again. ' +
    'After your context was compacted, or when you resume, call todo_read first and continue from the list it returns.'
  );
}

/** The scheme of the list's resource URI. */
export const TODOS_URI_SCHEME = 'session';

/**
 * The URI of a session's list as a resource: `session://<id>/todos`, the id percent-encoded
 * (a subagent's id holds "/").
 */
export function todosResourceUri(sessionId: string): string {
  return `${TODOS_URI_SCHEME}://${encodeURIComponent(sessionId)}/todos`;
}
