import type { Command } from 'commander';
import { BUNDLED_SCRIPTS, bundledScriptFile, isBundledScript } from '../model-server/bundled-scripts';
import { UsageError } from './policy-option';

/** The port `agent-sessions model-server` listens on without `--port`: beside the HTTP API's 8080. */
export const MODEL_SERVER_DEFAULT_PORT = 8090;

interface ModelServerCommandOptions {
  script?: string;
  port: number;
  host: string;
  apiKey?: string;
  streaming: 'sse' | 'refuse' | 'json';
  streamRate: number;
}

/**
 * Adds `agent-sessions model-server --script FILE [--port N]`: a scripted model (OpenAI's
 * chat-completions wire format, answers from a script file) until SIGINT/SIGTERM. A script that
 * cannot be read or is malformed ends it with exit code 2 and a message naming the file and the problem.
 */
export function addModelServerCommand(program: Command): void {
  program
    .command('model-server')
    .description(
      'run a scripted model, not a real one: an OpenAI-compatible chat-completions server on loopback whose answers ' +
        'come from a script file (for tests and the demo), until SIGINT/SIGTERM',
    )
    .option('--script <file>', `the script: a JSON file, or the name of a bundled one (${BUNDLED_SCRIPTS.join(', ')})`)
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePortOrZero, MODEL_SERVER_DEFAULT_PORT)
    .option('--host <host>', 'address to bind (default 127.0.0.1; anything else exposes it)', '127.0.0.1')
    .option('--api-key <key>', 'require Authorization: Bearer <key> (default: any key is accepted)')
    .option('--streaming <mode>', 'how a request with stream: true is answered: sse (Server-Sent Events chunks), refuse (a 400), json (plain JSON)', parseStreamingMode, 'sse' as const)
    .option('--stream-rate <tokens-per-second>', 'pace of a streamed answer, in tokens (4 characters) per second; 0 sends them as fast as possible', parseRate, 0)
    .action(async (options: ModelServerCommandOptions) => runModelServer(options));
}

async function runModelServer(options: ModelServerCommandOptions): Promise<void> {
  if (options.script === undefined) {
    throw new UsageError(`model-server needs --script FILE (a JSON script, or one of ${BUNDLED_SCRIPTS.join(', ')})`);
  }
  const scriptFile = isBundledScript(options.script) ? bundledScriptFile(options.script) : options.script;
  const { modelServerBanner, startModelServer } = await import('../model-server');
  const server = await startModelServer({
    scriptFile,
    port: options.port,
    host: options.host,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    streaming: { mode: options.streaming, tokensPerSecond: options.streamRate },
  });
  process.stderr.write(`${modelServerBanner(server)}\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
}

function parsePortOrZero(value: string): number {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`--port must be an integer from 0 to 65535, got ${JSON.stringify(value)}`);
  return port;
}

function parseStreamingMode(value: string): 'sse' | 'refuse' | 'json' {
  if (value === 'sse' || value === 'refuse' || value === 'json') return value;
  throw new UsageError(`--streaming must be sse, refuse or json, got ${JSON.stringify(value)}`);
}

function parseRate(value: string): number {
  const rate = /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!(rate >= 0 && rate <= 100_000)) throw new UsageError(`--stream-rate must be a number of tokens per second from 0 to 100000, got ${JSON.stringify(value)}`);
  return rate;
}
