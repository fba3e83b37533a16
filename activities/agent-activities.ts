import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Registry } from '../src/metrics/prom-client';
import { SessionClient } from '../src/client/session-client';
import { streamPublisher } from '../src/client/session-stream';
import type { StreamStore } from '../src/streams';
import { SessionClosedError, SpawnRejectedError, TodoRejectedError, type RequestRejectedError } from '../src/client/errors';
import { AGENT_DEFAULTS, DEFAULT_APPROVE_TOOLS, matchesToolPattern, type AgentSettings } from '../src/config/agent-settings';
import { AgentLoopMetrics } from '../src/metrics';
import { assertTodoPolicy, TODO_WRITE_TOOL_NAME, type TodoPolicy } from '../src/todo';
import { sessionCloseSignal, turnEndSignal, turnStartSignal } from '../workflows/messages';
import type { AgentActivities, ToolOutcome, TurnSettings } from './agent-contract';
import { UNTRACED_TOOL, type AgentSpans, type ToolCallRequest, type ToolSpan } from './agent-spans';
import { sharedDeploymentReads } from './deployment-reads';
import { withHeartbeat } from './heartbeat';
import { meteredModelCall } from './metered-model-call';
import { modelCaller } from './model-call';
import type { McpPool } from './mcp-pool';
import { callMcpTool } from './mcp-call';
import { listMcpTools, parseMcpToolName, pinTools } from './mcp-tools';
import type { PreparedUserTool } from './user-tools';
import { parseToolArguments, SPAWN_SUBAGENT_TOOL_NAME, spawnSubagentArgsSchema, ToolRegistry } from './tool-registry';

/**
 * The agent loop's settings on a worker: the model endpoint and name, the limits of a turn, the
 * nudge, the tools that wait for a person, and the workspace of the file tools. The same type
 * the settings loader reads from the environment (`OPENAI_BASE_URL`, `OPENAI_API_KEY`,
 * `AGENT_SESSIONS_MODEL`, `AGENT_SESSIONS_MAX_STEPS`, …).
 */
export type AgentWorkerSettings = AgentSettings;

/** Options of {@link createAgentActivities}. */
export interface AgentActivitiesOptions {
  /** The deployment's parallel policy: it shapes the `todo_write` description the model reads. */
  policy: TodoPolicy;
  /** Missing fields take the documented defaults; no key and no base URL means OpenAI's endpoint, which then fails naming OPENAI_API_KEY. */
  agent?: Partial<AgentWorkerSettings>;
  /** How long one model request may take before it is abandoned and retried (default 5 minutes). */
  modelRequestTimeoutMs?: number;
  /**
   * Where the activities count writes, model calls, tokens and turns (see `src/metrics`); a
   * registry of their own, served by no one, unless given.
   */
  metrics?: Registry;
  /** The tracer of model and tool calls, on a worker that exports traces; absent, nothing is traced. */
  spans?: AgentSpans;
  /** The worker's MCP servers (from `agent.mcpServers`), connected once per worker; absent, no MCP tools. */
  mcp?: McpPool;
  /** The user's own tools, checked (`prepareUserTools`), and the module they came from. */
  userTools?: { tools: readonly PreparedUserTool[]; source: string };
  /** Where the model's words go while a call runs (docs/streaming.md); absent, they are not published (the answer is the same). */
  streamStore?: StreamStore;
}

/** What the model is told it is. Our own words; the tools' descriptions carry the details. */
export const AGENT_SYSTEM_PROMPT =
  'You are an agent working inside a durable session: everything you do is recorded, and the session ' +
  'outlives any single process. Work toward what the user asked until it is done, then answer with a ' +
  'short summary of what you did. For work with several steps, first plan it with todo_write (one todo ' +
  'per step) and keep that list current as you go; skip the list for a single quick step. When a part ' +
  'of the job can be done on its own, delegate it with spawn_subagent and use its answer. If a tool ' +
  'result says a call was refused, read why and correct the call instead of repeating it.';

/** The agent settings with every missing field at its default. */
export function agentWorkerSettings(agent: Partial<AgentWorkerSettings> = {}): AgentWorkerSettings {
  return {
    ...(agent.baseUrl !== undefined ? { baseUrl: agent.baseUrl } : {}),
    apiKey: agent.apiKey ?? (() => undefined),
    model: agent.model ?? AGENT_DEFAULTS.model,
    maxSteps: agent.maxSteps ?? AGENT_DEFAULTS.maxSteps,
    maxContextChars: agent.maxContextChars ?? AGENT_DEFAULTS.maxContextChars,
    nudge: agent.nudge ?? AGENT_DEFAULTS.nudge,
    approveTools: [...(agent.approveTools ?? DEFAULT_APPROVE_TOOLS)],
    ...(agent.workspace !== undefined ? { workspace: agent.workspace } : {}),
    ...(agent.mcpServers !== undefined ? { mcpServers: agent.mcpServers } : {}),
    stream: agent.stream ?? AGENT_DEFAULTS.stream,
    streamBatchMs: agent.streamBatchMs ?? AGENT_DEFAULTS.streamBatchMs,
  };
}

/**
 * The agent's activities (see `agent-contract.ts`), for a worker's configuration. Every answer
 * that depends on that configuration (the turn's settings, the model's answer, a tool's result)
 * becomes an activity result in history, so replay never decides anything again.
 *
 * @throws TypeError naming `allowParallelInProgress` when the policy is missing.
 */
export function createAgentActivities(options: AgentActivitiesOptions): AgentActivities {
  assertTodoPolicy(options.policy, 'createAgentActivities()');
  const settings = agentWorkerSettings(options.agent);
  const readDeployment = sharedDeploymentReads();
  const registry = new ToolRegistry({
    policy: options.policy,
    ...(settings.workspace !== undefined ? { workspace: settings.workspace } : {}),
    ...(options.userTools !== undefined ? { userTools: options.userTools.tools, userToolsSource: options.userTools.source } : {}),
  });
  const turnSettings: TurnSettings = {
    systemPrompt: AGENT_SYSTEM_PROMPT,
    model: settings.model,
    maxSteps: settings.maxSteps,
    maxContextChars: settings.maxContextChars,
    nudge: settings.nudge,
    approveTools: approvedAmong(registry.definitions().map((tool) => tool.function.name), settings.approveTools),
    tools: registry.definitions(),
    places: registry.places(),
  };
  const mcp = options.mcp;
  const streamStore = options.streamStore;
  const metrics = new AgentLoopMetrics(options.metrics ?? new Registry());
  const callModel = modelCaller(
    {
      ...(settings.baseUrl !== undefined ? { baseUrl: settings.baseUrl } : {}),
      apiKey: settings.apiKey,
      ...(options.modelRequestTimeoutMs !== undefined ? { requestTimeoutMs: options.modelRequestTimeoutMs } : {}),
      stream: settings.stream,
    },
    // The words go to the stream store, never to the session's own history.
    streamStore !== undefined ? { words: ({ sessionId }) => streamPublisher({ store: streamStore, sessionId }, { batchMs: settings.streamBatchMs }) } : {},
    options.spans,
  );
  const spans = options.spans;
  const toolCall = <T extends ToolOutcome>(request: ToolCallRequest, run: (span: ToolSpan) => Promise<T>): Promise<T> =>
    spans !== undefined ? spans.toolCall(request, run) : run(UNTRACED_TOOL);

  return {
    async beginTurn({ sessionId, messageId, turn, pins }) {
      // A retry after the signal landed must not start a second turn: look first.
      const current = await sessions().session(sessionId);
      if (current.turn < turn) await session(sessionId).signal(turnStartSignal, { reason: `message ${messageId}` });
      if (mcp === undefined) return turnSettings;
      // What the servers offer now is read here, once per turn, so history records what the
      // model was offered and a replay asks no server.
      const listing = await withHeartbeat(() => listMcpTools(mcp));
      const pinned = pinTools(listing.definitions, pins ?? {});
      const tools = [...turnSettings.tools, ...pinned.offered];
      const withheldNotes = pinned.withheld.map((tool) => `The tool ${tool.name} is withheld this turn: ${tool.reason}.`);
      return {
        ...turnSettings,
        systemPrompt: [turnSettings.systemPrompt, ...listing.notes, ...withheldNotes].join('\n'),
        tools,
        places: { ...turnSettings.places, ...Object.fromEntries(pinned.offered.map((tool) => [tool.function.name, 'worker' as const])) },
        approveTools: approvedAmong(tools.map((tool) => tool.function.name), settings.approveTools),
        pins: pinned.pins,
        withheld: pinned.withheld,
      };
    },

    async releaseTarget({ sessionId }) {
      const context = Context.current();
      const described = await session(sessionId).describe();
      const running = described.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion;
      if (!running?.deploymentName || !running.buildId) return { move: false, runningBuild: null, current: null, ramping: null };
      const deployment = await readDeployment(context.client.workflowService, context.info.namespace, running.deploymentName, context.info.scheduledTimestampMs);
      const current = deployment?.current ?? null;
      const ramping = deployment?.ramping?.buildId ?? null;
      return { move: current !== null && current !== running.buildId && ramping !== running.buildId, runningBuild: running.buildId, current, ramping };
    },

    async endTurn({ sessionId, reason, startedAtMs, close }) {
      try {
        await session(sessionId).signal(turnEndSignal, { reason });
        // A subagent that ran its task closes through its log too, so the offline fold sees it.
        if (close === true) await session(sessionId).signal(sessionCloseSignal, { reason: 'the subagent finished its task' });
      } catch (error) {
        // A session that closed meanwhile has no turn left to end.
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
      // Both ends are times in the session's history (the workflow task that began the turn, the
      // scheduling of this activity), so every attempt and every worker measures the same turn.
      const { scheduledTimestampMs } = Context.current().info;
      const seconds = startedAtMs !== undefined ? Math.max(0, scheduledTimestampMs - startedAtMs) / 1000 : undefined;
      metrics.turnEnded(activityKey(), reason, seconds);
    },

    callModel: meteredModelCall(callModel, metrics),

    writeTodos: ({ sessionId, callId, arguments: text }) =>
      toolCall({ sessionId, callId, name: TODO_WRITE_TOOL_NAME, arguments: text }, async (span) => {
        const args = parseJson(TODO_WRITE_TOOL_NAME, text);
        if (!args.ok) return args;
        try {
          // The very update any other writer sends, judged by the same validator; the id derived
          // from this activity makes a retried activity apply the write once.
          const updateId = toolUpdateId();
          // Counted by the session's answer, once per update id: a retry answered again is not a second write.
          const result = await metrics.todoWrites.count(updateId, () => withHeartbeat(() => sessions().todoWrite(sessionId, args.value, { updateId })));
          return { ok: true, content: result.message };
        } catch (error) {
          if (error instanceof TodoRejectedError) span.refused(error.rule, rulesOf(error));
          if (error instanceof TodoRejectedError || error instanceof SessionClosedError) return { ok: false, content: error.message };
          throw error;
        }
      }),

    spawnSubagent: ({ sessionId, callId, arguments: text }) =>
      toolCall({ sessionId, callId, name: SPAWN_SUBAGENT_TOOL_NAME, arguments: text }, async (span) => {
        const parsed = parseToolArguments({ name: SPAWN_SUBAGENT_TOOL_NAME, schema: spawnSubagentArgsSchema }, text);
        if (!parsed.ok) return parsed;
        const { name, task } = parsed.value;
        try {
          const child = await withHeartbeat(() => sessions().spawnSubagent(sessionId, { name, task, agent: true }, { updateId: toolUpdateId() }));
          return { ok: true, content: `subagent ${child.sessionId} started`, childId: child.sessionId };
        } catch (error) {
          if (error instanceof SpawnRejectedError) span.refused(error.rule, rulesOf(error));
          if (error instanceof SpawnRejectedError || error instanceof SessionClosedError) return { ok: false, content: error.message };
          throw error;
        }
      }),

    runTool: ({ sessionId, callId, name, arguments: text }) =>
      toolCall({ sessionId, callId, name, arguments: text }, () =>
        withHeartbeat(() =>
          mcp !== undefined && parseMcpToolName(name) !== undefined
            ? callMcpTool(mcp, name, text, { idempotencyKey: `mcp:${activityKey()}` })
            : registry.run(name, text, { sessionId, callId, signal: Context.current().cancellationSignal, heartbeat: (details) => Context.current().heartbeat(details) }),
        ),
      ),
  };
}

/**
 * The offered tools that wait for a person: those named by, or matching, the patterns of
 * `AGENT_SESSIONS_APPROVE_TOOLS`. Matched here, in the turn's settings, so the workflow only
 * ever compares names and a replay reads the list the turn began with.
 */
function approvedAmong(names: readonly string[], patterns: readonly string[]): string[] {
  return [...new Set([...patterns.filter((pattern) => !pattern.includes('*')), ...names.filter((name) => matchesToolPattern(name, patterns))])];
}

/** Every rule a refusal broke, the first first, each once. */
function rulesOf(error: RequestRejectedError): string[] {
  return [...new Set([error.rule, ...error.problems.map((problem) => problem.rule)])];
}

/** The session as the worker's own client sees it. */
function session(sessionId: string) {
  return Context.current().client.workflow.getHandle(sessionId);
}

/** A session client on the worker's connection and the activity's task queue (the session's own). */
function sessions(): SessionClient {
  const context = Context.current();
  return new SessionClient(context.client, { taskQueue: context.info.taskQueue });
}

/** The model's arguments as JSON, or the outcome that tells it they are not JSON. */
/**
 * The update id of a tool call's write or spawn: the run and the activity that send it, stable
 * across the activity's retries and unique in the session's whole life — unlike the model's own
 * call ids, which some OpenAI-compatible servers reuse (`call_0`) or leave empty.
 */
function toolUpdateId(): string {
  return `tool:${activityKey()}`;
}

/** The running activity, the same for each of its attempts: its run and its id. */
function activityKey(): string {
  const { workflowExecution, activityId } = Context.current().info;
  return `${workflowExecution?.runId ?? 'no-run'}:${activityId}`;
}

function parseJson(tool: string, text: string): { ok: true; value: unknown } | (ToolOutcome & { ok: false }) {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, content: `${tool} rejected: the arguments are not valid JSON (${(error as Error).message}); send {"todos": [...]} as a JSON object` };
  }
}
