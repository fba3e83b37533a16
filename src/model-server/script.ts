import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { InvalidSettingError } from '../client/errors';
import { acceptTodoWrite, formatPath, TODO_WRITE_TOOL_NAME, type TodoPolicy } from '../todo';

/**
 * Thrown when a script file cannot be read or breaks a rule of the script format. The message
 * names the file, the conversation and the step, and what to fix there. It is a setting error
 * (code `invalid-setting`), so the CLI exits with 2.
 */
export class ModelScriptError extends InvalidSettingError {
  override readonly name = 'ModelScriptError';
}

/** Roles a chat-completions message can have. */
export const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

/** Longest wait a step may ask for: ten minutes, far beyond any activity timeout a test sets. */
export const MAX_DELAY_MS = 600_000;

/** A conversation's name is part of every tool call id it produces, so it is kept id-safe. */
const CONVERSATION_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,39}$/;

const pattern = z.string().min(1).describe('a JavaScript regular expression, without flags; (?i:...) for case-insensitive');

const contentCheckSchema = z.strictObject({
  contentMatches: pattern.optional(),
  contentDoesNotMatch: pattern.optional(),
});

const stepSchema = z.strictObject({
  note: z.string().optional(),
  expect: z
    .strictObject({
      lastMessage: contentCheckSchema.extend({ role: z.enum(MESSAGE_ROLES).optional() }).strict().optional(),
      toolResults: z.array(contentCheckSchema).min(1).optional(),
      toolsInclude: z.array(z.string().min(1)).min(1).optional(),
    })
    .optional(),
  respond: z.strictObject({
    content: z.string().optional(),
    tool_calls: z
      .array(
        z.strictObject({
          name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a tool name is 1-64 letters, digits, "_" or "-"'),
          arguments: z.record(z.string(), z.unknown()),
          expectRejected: z.boolean().optional(),
        }),
      )
      .min(1)
      .optional(),
    delayMs: z.number().int().min(0).max(MAX_DELAY_MS).optional(),
    error: z
      .strictObject({
        status: z.number().int().min(400).max(599),
        message: z.string().min(1),
        type: z.string().min(1).optional(),
        code: z.string().min(1).optional(),
        times: z.number().int().min(1).optional(),
        retryAfterMs: z.number().int().min(0).max(60_000).optional(),
      })
      .optional(),
  }),
});

const scriptSchema = z.strictObject({
  description: z.string().optional(),
  model: z.string().min(1).max(200).optional(),
  policy: z.strictObject({ allowParallelInProgress: z.boolean() }).optional(),
  conversations: z
    .array(
      z.strictObject({
        name: z.string().regex(CONVERSATION_NAME, 'a conversation name is 1-40 letters, digits or "-", starting with a letter or digit'),
        note: z.string().optional(),
        match: z.strictObject({ firstUserMessage: pattern }),
        steps: z.array(stepSchema).min(1),
      }),
    )
    .min(1),
});

/** A script as written in its JSON file (see `models/*.json`). */
export type ScriptJson = z.input<typeof scriptSchema>;

/** A check on the text of one message. */
export interface ContentCheck {
  contentMatches?: RegExp;
  contentDoesNotMatch?: RegExp;
}

/** What the agent loop must have sent before a step is answered. */
export interface StepExpectation {
  /** The last message of the request. */
  lastMessage?: ContentCheck & { role?: (typeof MESSAGE_ROLES)[number] };
  /** The results of the previous answer's tool calls, one per call, in the order of the calls. */
  toolResults?: ContentCheck[];
  /** Names the request's `tools` must offer. */
  toolsInclude?: string[];
}

/** One tool call a step answers with; `arguments` is sent as the JSON string the wire format wants. */
export interface ScriptToolCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Documentation and load-time check: this `todo_write` list is meant to be refused under the script's policy. */
  expectRejected?: boolean;
}

/** An HTTP error a step answers with, the first `times` requests for it (always, without `times`). */
export interface ScriptFailure {
  status: number;
  message: string;
  type?: string;
  code?: string;
  times?: number;
  /** Sent as `retry-after-ms`, which the openai client honours between its own retries. */
  retryAfterMs?: number;
}

/** The answer of one step. */
export interface ScriptResponse {
  content?: string;
  tool_calls?: ScriptToolCall[];
  delayMs?: number;
  error?: ScriptFailure;
}

/** One step: the answer to a request that already holds `index` assistant messages. */
export interface ScriptStep {
  index: number;
  note?: string;
  expect?: StepExpectation;
  respond: ScriptResponse;
}

/** A conversation: the steps answered to every request its matcher selects. */
export interface ScriptConversation {
  name: string;
  note?: string;
  match: { firstUserMessage: RegExp };
  steps: ScriptStep[];
}

/** A script, checked and with its patterns compiled; made only by {@link parseScript}. */
export interface ModelScript {
  /** Where it came from (the file path, or `<inline script>`), named in every message about it. */
  source: string;
  description?: string;
  /** The model id `GET /v1/models` lists. */
  model: string;
  /** The policy the script's todo lists were written for, checked at load time when present. */
  policy?: TodoPolicy;
  conversations: ScriptConversation[];
}

/** The model id listed when a script names none. */
export const DEFAULT_SCRIPTED_MODEL = 'scripted';

const loaded = new WeakSet<ModelScript>();

/** True for a script that {@link parseScript} made (and so already checked). */
export function isModelScript(value: unknown): value is ModelScript {
  return typeof value === 'object' && value !== null && loaded.has(value as ModelScript);
}

/**
 * Reads and checks a script file.
 *
 * @throws ModelScriptError naming the file and, for a broken rule, the conversation and step.
 */
export function loadScriptFile(file: string): ModelScript {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ModelScriptError(`cannot read the model script ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ModelScriptError(`the model script ${file} is not valid JSON: ${(error as Error).message}`);
  }
  return parseScript(json, file);
}

/**
 * Checks a script given as a JSON value: its shape (strict: an unknown property is an error),
 * unique conversation names, patterns that compile, a step that answers something, tool results
 * expected only after as many tool calls, and, when the script declares a policy, every
 * `todo_write` list judged by the project's own {@link acceptTodoWrite}: accepted, or refused if
 * and only if the call says `"expectRejected": true`.
 *
 * @param source how messages name the script (its file path).
 * @throws ModelScriptError naming the source, the conversation and the step.
 */
export function parseScript(value: unknown, source = '<inline script>'): ModelScript {
  const parsed = scriptSchema.safeParse(value);
  if (!parsed.success) {
    const listed = parsed.error.issues.slice(0, 5).map((issue) => `${where(value, issue.path)}: ${issue.message}`);
    const more = parsed.error.issues.length - listed.length;
    throw new ModelScriptError(
      `the model script ${source} is malformed: ${listed.join('; ')}${more > 0 ? `; …and ${more} more` : ''}`,
    );
  }
  const json = parsed.data;
  const fail = (place: string, problem: string): never => {
    throw new ModelScriptError(`the model script ${source} is malformed: ${place}: ${problem}`);
  };
  const names = new Set<string>();
  const conversations = json.conversations.map((conversation): ScriptConversation => {
    const at = `conversation "${conversation.name}"`;
    if (names.has(conversation.name)) fail(at, 'another conversation has the same name; names must be unique (they are part of tool call ids)');
    names.add(conversation.name);
    const steps = conversation.steps.map((step, index): ScriptStep => {
      const place = `${at}, step ${index}`;
      const regex = (text: string | undefined, field: string): RegExp | undefined => (text === undefined ? undefined : compile(text, `${place}: ${field}`, fail));
      const check = (c: { contentMatches?: string | undefined; contentDoesNotMatch?: string | undefined }, field: string): ContentCheck => ({
        ...optional('contentMatches', regex(c.contentMatches, `${field}.contentMatches`)),
        ...optional('contentDoesNotMatch', regex(c.contentDoesNotMatch, `${field}.contentDoesNotMatch`)),
      });
      const { respond } = step;
      const calls = respond.tool_calls;
      if (respond.content === undefined && calls === undefined && (respond.error === undefined || respond.error.times !== undefined)) {
        fail(place, 'respond has neither "content" nor "tool_calls"' + (respond.error !== undefined ? ' to answer once its error has been sent "times" times' : ''));
      }
      const results = step.expect?.toolResults;
      if (results !== undefined) {
        const previous = index === 0 ? 0 : (conversation.steps[index - 1]?.respond.tool_calls?.length ?? 0);
        if (results.length !== previous) {
          fail(place, `expect.toolResults lists ${results.length} result(s), but the previous step makes ${previous} tool call(s); list one per call`);
        }
      }
      calls?.forEach((call, callIndex) => checkToolCall(call, `${place}, respond.tool_calls[${callIndex}] (${call.name})`, json.policy, fail));
      const expect = step.expect;
      return {
        index,
        ...optional('note', step.note),
        ...(expect === undefined
          ? {}
          : {
              expect: {
                ...(expect.lastMessage === undefined
                  ? {}
                  : { lastMessage: { ...optional('role', expect.lastMessage.role), ...check(expect.lastMessage, 'expect.lastMessage') } }),
                ...optional('toolResults', expect.toolResults?.map((c, i) => check(c, `expect.toolResults[${i}]`))),
                ...optional('toolsInclude', expect.toolsInclude),
              },
            }),
        respond: {
          ...optional('content', respond.content),
          ...optional('tool_calls', calls?.map((call) => ({ name: call.name, arguments: call.arguments, ...optional('expectRejected', call.expectRejected) }))),
          ...optional('delayMs', respond.delayMs),
          ...optional('error', respond.error === undefined ? undefined : withoutUndefined(respond.error)),
        },
      };
    });
    return {
      name: conversation.name,
      ...optional('note', conversation.note),
      match: { firstUserMessage: compile(conversation.match.firstUserMessage, `${at}: match.firstUserMessage`, fail) },
      steps,
    };
  });
  const script: ModelScript = {
    source,
    ...optional('description', json.description),
    model: json.model ?? DEFAULT_SCRIPTED_MODEL,
    ...optional('policy', json.policy),
    conversations,
  };
  loaded.add(script);
  return script;
}

function checkToolCall(
  call: { name: string; arguments: Record<string, unknown>; expectRejected?: boolean | undefined },
  place: string,
  policy: TodoPolicy | undefined,
  fail: (place: string, problem: string) => never,
): void {
  if (call.expectRejected === true && call.name !== TODO_WRITE_TOOL_NAME) {
    fail(place, `"expectRejected" is for ${TODO_WRITE_TOOL_NAME} calls only`);
  }
  if (call.name !== TODO_WRITE_TOOL_NAME || policy === undefined) {
    if (call.expectRejected === true) fail(place, '"expectRejected" needs the script\'s "policy" to say under which policy the list is refused');
    return;
  }
  const under = `under allowParallelInProgress=${policy.allowParallelInProgress}`;
  let refusal: string | undefined;
  try {
    acceptTodoWrite(call.arguments, policy);
  } catch (error) {
    refusal = (error as Error).message;
  }
  if (refusal !== undefined && call.expectRejected !== true) {
    fail(place, `the list is refused ${under} (${refusal}); fix it, or mark the call "expectRejected": true if that is the point`);
  }
  if (refusal === undefined && call.expectRejected === true) {
    fail(place, `the call is marked "expectRejected" but the list is accepted ${under}`);
  }
}

function compile(source: string, place: string, fail: (place: string, problem: string) => never): RegExp {
  try {
    return new RegExp(source);
  } catch (error) {
    return fail(place, `not a valid regular expression: ${(error as Error).message}`);
  }
}

/** `{ [key]: value }`, or nothing when the value is undefined (the types forbid explicit undefined). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function withoutUndefined<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}

/**
 * Where a schema issue is, in the script's own terms: `conversation "lint", step 2:
 * respond.delayMs`, using the conversation's name when the raw JSON has one.
 */
function where(value: unknown, path: readonly PropertyKey[]): string {
  if (path[0] !== 'conversations' || typeof path[1] !== 'number') return path.length === 0 ? 'the script' : formatPath(path);
  const raw = (value as { conversations: unknown[] }).conversations[path[1]];
  const name = typeof raw === 'object' && raw !== null ? (raw as { name?: unknown }).name : undefined;
  let place = typeof name === 'string' && name !== '' ? `conversation "${name}"` : `conversation #${path[1] + 1}`;
  let rest = path.slice(2);
  if (rest[0] === 'steps' && typeof rest[1] === 'number') {
    place += `, step ${rest[1]}`;
    rest = rest.slice(2);
  }
  return rest.length === 0 ? place : `${place}: ${formatPath(rest)}`;
}
