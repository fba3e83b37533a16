import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { AgentSettings } from '../config';
import type { ModelServer, ScriptJson } from '../model-server';
import { bundledScriptFile, type BundledScript } from '../model-server/bundled-scripts';
import type { TodoPolicy } from '../todo';

/**
 * How long the demo's scripted model takes per answer: a real model takes seconds, and without
 * a pause the whole turn would be over before a person looking at the dashboard saw the list move.
 */
export const DEMO_ANSWER_DELAY_MS = 1200;

/** How fast the demo's scripted model writes a streamed answer: slow enough to watch the words come. */
export const DEMO_TOKENS_PER_SECOND = 30;

/** The model `agent-sessions up` gives the worker, and what its startup output says about it. */
export interface UpModel {
  /** The worker's agent settings: the environment's, or pointed at the scripted demo model. */
  agent: AgentSettings;
  /** Lines for the startup output (never the key). */
  lines: string[];
  /** The first message to suggest, which the model answers (the demo's script matches it). */
  tryMessage: string;
  /** Whether this is the scripted demo model, started here (and stopped by {@link close}). */
  demo: boolean;
  /** Stops the scripted model, when one was started. */
  close(): Promise<void>;
}

/** The bundled scripts the demo answers from, and when each fits the worker's policy. */
function demoScripts(policy: TodoPolicy): BundledScript[] {
  // The fan-out marks two todos in_progress at once: it is part of the demo only where that is allowed.
  // edit-file needs the filesystem MCP server (docs/tools.md); without it its first step says so.
  return policy.allowParallelInProgress ? ['lint-fix', 'subagents', 'edit-file'] : ['lint-fix', 'edit-file'];
}

/**
 * One script from the bundled ones: their conversations side by side (each reached by its own
 * first message), every answer paced by {@link DEMO_ANSWER_DELAY_MS}, checked under `policy`.
 */
export function demoScript(policy: TodoPolicy): { script: ScriptJson; files: string[] } {
  const names = demoScripts(policy);
  const files = names.map((name) => bundledScriptFile(name));
  const conversations = files.flatMap((file) => (JSON.parse(readFileSync(file, 'utf8')) as ScriptJson).conversations);
  const paced = conversations.map((conversation) => ({
    ...conversation,
    steps: conversation.steps.map((step) => ({ ...step, respond: { ...step.respond, delayMs: step.respond.delayMs ?? DEMO_ANSWER_DELAY_MS } })),
  }));
  return {
    script: {
      description: `npm start's demo: ${names.join(' and ')}, each answer after ${DEMO_ANSWER_DELAY_MS} ms`,
      model: 'scripted-demo',
      policy: { allowParallelInProgress: policy.allowParallelInProgress },
      conversations: paced,
    },
    files,
  };
}

/**
 * The model of `agent-sessions up`: with `OPENAI_BASE_URL` or `OPENAI_API_KEY` set, the one they
 * name; with neither, a scripted model on loopback (a free port) answering from `models/`, so that
 * `npm start` runs an agent out of the box and says plainly that its answers are scripted.
 */
export async function upModel(agent: AgentSettings, policy: TodoPolicy): Promise<UpModel> {
  const realMessage = 'Fix the lint errors';
  if (agent.baseUrl !== undefined || agent.apiKey() !== undefined) {
    const keyNote = agent.apiKey() !== undefined ? 'key from OPENAI_API_KEY, not shown' : 'no OPENAI_API_KEY';
    return {
      agent,
      lines: [`  Model: ${agent.model} at ${agent.baseUrl ?? "OpenAI's API (https://api.openai.com/v1)"} (${keyNote})`],
      tryMessage: realMessage,
      demo: false,
      close: async () => {},
    };
  }
  const { script, files } = demoScript(policy);
  const { startModelServer } = await import('../model-server');
  const server: ModelServer = await startModelServer({ script, host: '127.0.0.1', port: 0, streaming: { tokensPerSecond: DEMO_TOKENS_PER_SECOND } });
  const shown = files.map((file) => relative(process.cwd(), file) || file).join(' and ');
  return {
    // Any key is accepted by the scripted model; none is set, so none can leak.
    agent: { ...agent, baseUrl: server.url, apiKey: () => undefined, model: server.script.model },
    lines: [
      `  Model: SCRIPTED DEMO, not a real model: answers come from ${shown} (at ${server.url}, one answer every ${DEMO_ANSWER_DELAY_MS / 1000} s, streamed at ${DEMO_TOKENS_PER_SECOND} tokens/s)`,
      `    it answers the first messages "${realMessage}"${policy.allowParallelInProgress ? ', "Update the tests and the docs for the --verbose flag" (two subagents)' : ''} and "Add a changelog entry" (with the filesystem MCP server: docs/tools.md)`,
      '    For a real model: OPENAI_BASE_URL=https://api.deepseek.com/v1 OPENAI_API_KEY=sk-… AGENT_SESSIONS_MODEL=deepseek-chat npm start',
      '    (any OpenAI-compatible chat-completions endpoint; without OPENAI_BASE_URL, OpenAI\'s own)',
    ],
    tryMessage: realMessage,
    demo: true,
    close: () => server.close(),
  };
}
