import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { InvalidSettingError } from '../client/errors';
import { openAIError } from './openai-error';
import { RequestLog, type ModelRequestRecord } from './request-log';
import { isModelScript, loadScriptFile, parseScript, type ModelScript, type ScriptJson } from './script';
import { answerStep, routeRequest, type ScriptedAnswer } from './scripted-model';
import { completionChunks, type StreamingOptions } from './sse-answer';

/** Thrown when the scripted model cannot listen where it was asked to (a port in use, an unknown address). */
export class ModelServerListenError extends InvalidSettingError {
  override readonly name = 'ModelServerListenError';
}

/** Where the scripted model takes its answers from, and where it listens. */
export type ModelServerOptions = (
  | { /** A script: one made by `parseScript`, or its JSON value (checked here). */ script: ModelScript | ScriptJson; scriptFile?: never }
  | { /** A script file (checked here). */ scriptFile: string; script?: never }
) & {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Address to bind; 127.0.0.1 by default. On a loopback address, only loopback Host headers are answered. */
  host?: string;
  /** When set, every request must carry `Authorization: Bearer <apiKey>`; otherwise any key (or none) is accepted. */
  apiKey?: string;
  /** Largest request body, in bytes (8 MiB by default). */
  maxBodyBytes?: number;
  /** How a request with `stream: true` is answered: Server-Sent Events at a pace (the default, as fast as possible), refused, or plain JSON. */
  streaming?: StreamingOptions;
};

/** A running scripted model. */
export interface ModelServer {
  /** The base URL to give the openai client: `http://127.0.0.1:PORT/v1`. */
  url: string;
  port: number;
  script: ModelScript;
  /** Every chat-completions request received, in order (copies). */
  requests(): ModelRequestRecord[];
  /** The first request, logged or to come, that satisfies `predicate` (default timeout 10 s). */
  waitForRequest(predicate: (record: ModelRequestRecord) => boolean, options?: { timeoutMs?: number }): Promise<ModelRequestRecord>;
  /** Forgets the request log and the counts of scripted errors. */
  reset(): void;
  /** Stops listening and drops every connection; requests still waiting end as not completed. */
  close(): Promise<void>;
}

const CHAT_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const DEFAULT_MAX_BODY = 8 * 1024 * 1024;
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/**
 * Starts a scripted model: an HTTP server speaking OpenAI's chat-completions wire format, whose
 * answers come from a script (see `script.ts` for the format). Answers are chosen from the request
 * alone, so a call retried after a worker crash gets the same answer with the same tool call ids.
 *
 * Routes: `POST /v1/chat/completions` (also `/chat/completions`), `GET /v1/models[/ID]`,
 * `GET /_scripted/requests` (the request log as `{ requests: [...] }`), `POST /_scripted/reset`.
 *
 * @throws ModelScriptError for a script that cannot be read or is malformed.
 * @throws ModelServerListenError when the port is taken or the address cannot be bound.
 * @example
 * const server = await startModelServer({ scriptFile: 'models/lint-fix.json' });
 * const openai = new OpenAI({ baseURL: server.url, apiKey: 'anything' });
 */
export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const script =
    options.scriptFile !== undefined ? loadScriptFile(options.scriptFile) : isModelScript(options.script) ? options.script : parseScript(options.script);
  const host = options.host ?? '127.0.0.1';
  const log = new RequestLog();
  const created = Math.floor(Date.now() / 1000);
  const context: Context = {
    script,
    log,
    created,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY,
    expectedAuth: options.apiKey === undefined ? undefined : digest(`Bearer ${options.apiKey}`),
    loopbackOnly: isLoopback(host),
    host,
    streaming: checkStreaming(options.streaming ?? {}),
  };
  const server = createServer((req, res) => {
    handle(context, req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, openAIError(500, `scripted model failed: ${(error as Error).message}`, 'scripted_server_error'));
      else res.destroy();
    });
  });
  const port = await listen(server, options.port ?? 0, host);
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
    port,
    script,
    requests: () => log.list(),
    waitForRequest: (predicate, waitOptions) => log.waitFor(predicate, waitOptions?.timeoutMs ?? 10_000),
    reset: () => log.reset(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error !== undefined ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

interface Context {
  script: ModelScript;
  log: RequestLog;
  created: number;
  maxBodyBytes: number;
  expectedAuth: Buffer | undefined;
  loopbackOnly: boolean;
  host: string;
  streaming: Required<StreamingOptions>;
}

async function handle(context: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = pathOf(req.url);
  if (CHAT_PATHS.has(path) && req.method === 'POST') return chatCompletion(context, req, res);
  const refusal = gate(context, req);
  if (refusal !== undefined) return sendJson(res, refusal.status, refusal.body);
  const methods = otherRoute(context, path);
  if (methods === undefined) {
    return sendJson(res, 404, openAIError(404, `Unknown request URL: ${req.method ?? '?'} ${path}. This scripted model serves POST /v1/chat/completions and GET /v1/models.`, 'unknown_url'));
  }
  const action = methods[req.method ?? ''];
  if (action === undefined) {
    const allowed = CHAT_PATHS.has(path) ? 'POST' : Object.keys(methods).join(', ');
    return sendJson(res, 405, openAIError(405, `${req.method ?? '?'} is not allowed on ${path}; use ${allowed}`, 'method_not_allowed'), { allow: allowed });
  }
  action(res);
}

/** The routes beside chat completions, by method; undefined for an unknown path. */
function otherRoute(context: Context, path: string): Partial<Record<string, (res: ServerResponse) => void>> | undefined {
  const { script, log } = context;
  const model = { id: script.model, object: 'model', created: context.created, owned_by: 'agent-sessions-scripted' };
  if (path === '/v1/models' || path === '/models') return { GET: (res) => sendJson(res, 200, { object: 'list', data: [model] }) };
  const id = /^\/(?:v1\/)?models\/([^/]+)$/.exec(path)?.[1];
  if (id !== undefined) {
    const wanted = decodeURIComponentSafe(id);
    return {
      GET: (res) =>
        wanted === script.model
          ? sendJson(res, 200, model)
          : sendJson(res, 404, openAIError(404, `The model ${JSON.stringify(wanted)} does not exist: this scripted model is ${JSON.stringify(script.model)}`, 'model_not_found')),
    };
  }
  if (path === '/_scripted/requests') return { GET: (res) => sendJson(res, 200, { requests: log.list() }) };
  if (path === '/_scripted/reset') {
    return {
      POST: (res) => {
        log.reset();
        sendJson(res, 200, { reset: true });
      },
    };
  }
  // Chat completions by POST never get here; any other method is answered 405.
  if (CHAT_PATHS.has(path)) return {};
  return undefined;
}

/** A chat completion: logged from its arrival, answered from the script, settled when its socket closes. */
async function chatCompletion(context: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { log } = context;
  const record = log.open();
  const gone = new AbortController();
  res.once('finish', () => log.update(record, { inFlight: false, completed: true }));
  res.once('close', () => {
    if (!res.writableFinished) {
      log.update(record, { inFlight: false, completed: false });
      gone.abort();
    }
  });
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
    log.update(record, { status });
    sendJson(res, status, body, { 'x-request-id': `req_scripted_${record.seq}`, ...headers });
  };
  const refusal = gate(context, req);
  if (refusal !== undefined) return answer(refusal.status, refusal.body);
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json') {
    return answer(415, openAIError(415, `send the request body as JSON with Content-Type: application/json (got ${JSON.stringify(req.headers['content-type'] ?? 'none')})`, 'unsupported_media_type'));
  }
  const text = await readBody(req, context.maxBodyBytes);
  if (text === 'aborted') return;
  if (text === 'too-large') {
    res.setHeader('connection', 'close');
    return answer(413, openAIError(413, `the request body is larger than ${context.maxBodyBytes} bytes`, 'request_too_large'));
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return answer(400, openAIError(400, `We could not parse the JSON body of your request: ${(error as Error).message}`, 'invalid_json'));
  }
  const routed = routeRequest(context.script, body, { refuseStreaming: context.streaming.mode === 'refuse' });
  let scripted: ScriptedAnswer;
  if (routed.ok) {
    const attempt = log.attempt(routed.conversation.name, routed.step.index);
    scripted = answerStep(routed, { attempt, created: context.created });
  } else {
    scripted = { conversation: routed.conversation, step: routed.step, status: routed.status, body: routed.body, headers: {}, delayMs: 0 };
  }
  const stream = typeof body === 'object' && body !== null && (body as { stream?: unknown }).stream === true;
  log.update(record, { conversation: scripted.conversation, step: scripted.step, status: scripted.status, stream });
  if (scripted.delayMs > 0) {
    try {
      await sleep(scripted.delayMs, undefined, { signal: gone.signal });
    } catch {
      return; // the client went away while the answer was being "thought"; the close handler logged it
    }
  }
  if (routed.ok && routed.request.stream && context.streaming.mode === 'sse' && scripted.status === 200) {
    log.update(record, { status: 200, streamed: true });
    return streamAnswer(res, scripted.body as ChatCompletion, { ...context.streaming, includeUsage: routed.request.includeUsage, record, log, gone: gone.signal });
  }
  answer(scripted.status, scripted.body, scripted.headers);
}

/**
 * Writes `completion` as Server-Sent Events chunks (see {@link completionChunks}), each token
 * `1 / tokensPerSecond` seconds after the one before, then `data: [DONE]`. Stops when the client
 * goes away (the close handler logs the request as not completed).
 */
async function streamAnswer(
  res: ServerResponse,
  completion: ChatCompletion,
  options: Required<StreamingOptions> & { includeUsage: boolean; record: ModelRequestRecord; log: RequestLog; gone: AbortSignal },
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
  const gapMs = options.tokensPerSecond > 0 ? 1000 / options.tokensPerSecond : 0;
  const start = performance.now();
  let tokens = 0;
  for (const { chunk, token } of completionChunks(completion, options)) {
    if (token) {
      // A fixed pace from the first token: the n-th goes n gaps after it, however long each write took.
      const due = start + tokens * gapMs;
      const wait = due - performance.now();
      if (wait > 0) {
        try {
          await sleep(wait, undefined, { signal: options.gone });
        } catch {
          return;
        }
      }
      if (tokens === 0) options.log.update(options.record, { firstTokenAt: new Date().toISOString() });
      tokens++;
    }
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

/** The streaming options with their defaults, checked. */
function checkStreaming(options: StreamingOptions): Required<StreamingOptions> {
  const mode = options.mode ?? 'sse';
  if (mode !== 'sse' && mode !== 'refuse' && mode !== 'json') throw new InvalidSettingError(`streaming.mode must be sse, refuse or json, got ${JSON.stringify(mode)}`);
  const tokensPerSecond = options.tokensPerSecond ?? 0;
  if (!(Number.isFinite(tokensPerSecond) && tokensPerSecond >= 0 && tokensPerSecond <= 100_000)) {
    throw new InvalidSettingError(`the streaming rate must be a number of tokens per second from 0 (as fast as possible) to 100000, got ${JSON.stringify(tokensPerSecond)}`);
  }
  const tokenChars = options.tokenChars ?? 4;
  if (!(Number.isInteger(tokenChars) && tokenChars >= 1 && tokenChars <= 1000)) {
    throw new InvalidSettingError(`streaming.tokenChars must be a whole number from 1 to 1000, got ${JSON.stringify(tokenChars)}`);
  }
  return { mode, tokensPerSecond, tokenChars };
}

/** Host and Authorization checks, shared by every route. */
function gate(context: Context, req: IncomingMessage): { status: number; body: unknown } | undefined {
  if (context.loopbackOnly) {
    const hostname = hostnameOf(req.headers.host ?? '');
    if (!LOOPBACK_NAMES.has(hostname) && hostname !== context.host.toLowerCase()) {
      // A web page that rebinds a name to 127.0.0.1 sends its own name as Host: refuse it.
      return {
        status: 403,
        body: openAIError(403, `Host ${JSON.stringify(req.headers.host ?? '')} is not a loopback name; this scripted model answers only 127.0.0.1, localhost and [::1]`, 'host_not_allowed'),
      };
    }
  }
  if (context.expectedAuth !== undefined) {
    const sent = digest(req.headers.authorization ?? '');
    if (!timingSafeEqual(sent, context.expectedAuth)) {
      return {
        status: 401,
        body: openAIError(401, 'Incorrect API key provided: this scripted model was started with an API key; send Authorization: Bearer <that key>', 'invalid_api_key'),
      };
    }
  }
  return undefined;
}

function readBody(req: IncomingMessage, limit: number): Promise<string | 'aborted' | 'too-large'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        resolve('too-large');
      } else chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', () => resolve('aborted'));
    req.once('close', () => {
      if (!req.complete) resolve('aborted');
    });
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)), ...headers });
  res.end(json);
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is in use; choose another port (0 picks a free one)' : `${error.code ?? 'error'}: ${error.message}`;
      reject(new ModelServerListenError(`the scripted model cannot listen on ${host}:${port}: ${why}`));
    });
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

function pathOf(url: string | undefined): string {
  const path = (url ?? '/').split('?')[0] ?? '/';
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

function hostnameOf(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.startsWith('[')) return lower.slice(0, lower.indexOf(']') + 1);
  return lower.split(':')[0] ?? '';
}

function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.has(host.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
