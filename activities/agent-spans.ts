/**
 * What the agent's activities tell a tracer about model and tool calls. Only an interface: the
 * worker passes an implementation when it exports traces (`src/tracing/agent-spans.ts`, GenAI
 * semantic conventions); without one the activities run as they are and load nothing of
 * OpenTelemetry. Spans are made by activities, never by workflow code: each attempt of an
 * activity is its own span, and a replay makes none.
 */
import type { ChatMessage } from '../src/session/agent-state';
import type { ModelAnswer, ToolDefinition, ToolOutcome } from './agent-contract';

/** One model call, as its span names it. */
export interface ModelCallRequest {
  /** The session the call belongs to (`gen_ai.conversation.id`). */
  sessionId: string;
  /** The model asked for (`gen_ai.request.model`). */
  model: string;
  /** The endpoint called (`server.address`, `server.port`). */
  baseUrl: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
}

/** One tool call, as its span names it. */
export interface ToolCallRequest {
  sessionId: string;
  /** The model's id of the call (`gen_ai.tool.call.id`). */
  callId: string;
  /** `gen_ai.tool.name`. */
  name: string;
  /** The arguments as the model sent them (JSON text). */
  arguments: string;
}

/** What a tool call tells its span beyond its outcome. */
export interface ToolSpan {
  /**
   * The call was refused by the session's rules (a `todo_write` or a spawn its validator
   * refused): `rule` is the first rule broken, `rules` every one.
   */
  refused(rule: string, rules: readonly string[]): void;
}

/** The tracer of the agent's activities. */
export interface AgentSpans {
  /** Runs one model call inside its `chat {model}` span (kind CLIENT). */
  modelCall(request: ModelCallRequest, call: () => Promise<ModelAnswer>): Promise<ModelAnswer>;
  /** Runs one tool call inside its `execute_tool {name}` span; an outcome that is not `ok` marks it as an error. */
  toolCall<T extends ToolOutcome>(request: ToolCallRequest, run: (span: ToolSpan) => Promise<T>): Promise<T>;
}

/** The tool span of an untraced worker: hears nothing. */
export const UNTRACED_TOOL: ToolSpan = Object.freeze({ refused: () => undefined });
