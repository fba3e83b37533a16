import { SessionClient } from '../client';
import { isServing, startDevServer, type DevServerHandle } from '../devserver';
import { startHttpServer, type HttpServer } from '../http/server';
import { temporalConfigFromEnv } from '../config/temporal-config';
import type { TodoPolicy } from '../todo';
import { createWorker } from '../worker/create-worker';
import { installRuntimeLogging } from '../worker/runtime-logging';

/** Resolves on the first SIGINT or SIGTERM. */
function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

interface LocalServerOptions {
  port: number;
  uiPort?: number;
  db?: string;
}

async function startLocalServer(options: LocalServerOptions): Promise<DevServerHandle> {
  return startDevServer({
    port: options.port,
    ...(options.uiPort !== undefined ? { uiPort: options.uiPort } : {}),
    ...(options.db !== undefined ? { dbFile: options.db } : {}),
  });
}

/** `agent-sessions dev`: the local Temporal server in the foreground. */
export async function runDevServer(options: LocalServerOptions): Promise<void> {
  const server = await startLocalServer(options);
  process.stderr.write(
    `Temporal dev server at ${server.address}` +
      `${server.uiUrl !== undefined ? `, Web UI at ${server.uiUrl}` : ''}; state in ${server.dbFile}. Ctrl-C stops it.\n`,
  );
  const stopped = await Promise.race([untilStopSignal(), server.exited.then((code) => code)]);
  if (typeof stopped === 'string') {
    await server.stop();
    return;
  }
  throw new Error(`the Temporal dev server exited by itself (code ${String(stopped)})`);
}

interface ServeOptions {
  port: number;
  host?: string;
  policy?: TodoPolicy;
}

/** Starts the HTTP service with the settings of the environment (token, CORS origins, extra Host names). */
async function startHttp(options: ServeOptions): Promise<HttpServer> {
  const token = process.env.AGENT_SESSIONS_TOKEN;
  const origins = (process.env.AGENT_SESSIONS_CORS_ORIGINS ?? '').split(',').map((o) => o.trim()).filter((o) => o !== '');
  const hosts = (process.env.AGENT_SESSIONS_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim()).filter((h) => h !== '');
  return startHttpServer({
    client: SessionClient.lazy(),
    port: options.port,
    host: options.host ?? '127.0.0.1',
    ...(options.policy !== undefined ? { policy: options.policy } : {}),
    ...(token !== undefined && token !== '' ? { token } : {}),
    ...(origins.length > 0 ? { corsOrigins: origins } : {}),
    ...(hosts.length > 0 ? { allowedHosts: hosts } : {}),
  });
}

/** `agent-sessions serve`: the HTTP API and dashboard until SIGINT/SIGTERM. */
export async function runServe(options: ServeOptions): Promise<void> {
  const server = await startHttp(options);
  process.stderr.write(
    `HTTP API and dashboard at ${server.url} (Temporal ${temporalConfigFromEnv().address})` +
      `${process.env.AGENT_SESSIONS_TOKEN ? '; bearer token required' : ''}. Ctrl-C stops it.\n`,
  );
  await untilStopSignal();
  await server.close();
}

/** `agent-sessions worker`: a session worker until SIGINT/SIGTERM. */
export async function runWorker(policy: TodoPolicy): Promise<void> {
  installRuntimeLogging();
  const sessionWorker = await createWorker(policy);
  const config = temporalConfigFromEnv();
  process.stderr.write(
    `worker polling task queue "${sessionWorker.taskQueue}" on ${config.address} (namespace ${sessionWorker.namespace}), ` +
      `allowParallelInProgress=${policy.allowParallelInProgress}\n`,
  );
  const running = sessionWorker.run();
  await Promise.race([untilStopSignal().then(() => sessionWorker.shutdown()), running]);
  await running;
}

/**
 * `agent-sessions up` (`npm start`): a local server (reused when one already answers; none with
 * `TEMPORAL_ADDRESS` set) and a worker, until SIGINT/SIGTERM.
 */
export async function runUp(policy: TodoPolicy, options: LocalServerOptions & { httpPort: number }): Promise<void> {
  let server: DevServerHandle | undefined;
  let uiUrl: string | undefined;
  if (process.env.TEMPORAL_ADDRESS === undefined || process.env.TEMPORAL_ADDRESS.trim() === '') {
    const address = `127.0.0.1:${options.port}`;
    if (await isServing(address)) {
      process.stderr.write(`reusing the Temporal server that already answers at ${address}\n`);
    } else {
      server = await startLocalServer(options);
      uiUrl = server.uiUrl;
    }
    process.env.TEMPORAL_ADDRESS = address;
  }
  let http: HttpServer | undefined;
  try {
    installRuntimeLogging();
    const sessionWorker = await createWorker(policy);
    http = await startHttp({ port: options.httpPort, policy });
    const config = temporalConfigFromEnv();
    const env = config.address === '127.0.0.1:7233' ? '' : `TEMPORAL_ADDRESS=${config.address} `;
    process.stdout.write(
      [
        'agent-sessions is running.',
        `  Temporal server: ${config.address} (namespace ${config.namespace})${server ? `, state in ${server.dbFile}` : ''}`,
        ...(uiUrl !== undefined ? [`  Temporal Web UI: ${uiUrl}`] : []),
        `  Worker: task queue "${sessionWorker.taskQueue}", allowParallelInProgress=${policy.allowParallelInProgress}`,
        `  Dashboard and HTTP API: ${http.url}  (OpenAPI: ${http.url}/openapi.json)`,
        'Try, in another terminal:',
        `  ${env}npx agent-sessions start demo`,
        `  ${env}npx agent-sessions write demo --json '{"todos":[{"content":"Run lint","status":"in_progress"},{"content":"Fix errors","status":"pending"}]}'`,
        `  ${env}npx agent-sessions todos demo`,
        `  curl -s ${http.url}/sessions/demo/todos`,
        'Ctrl-C stops everything.',
        '',
      ].join('\n'),
    );
    const running = sessionWorker.run();
    await Promise.race([untilStopSignal().then(() => sessionWorker.shutdown()), running]);
    await running;
  } finally {
    await http?.close();
    await server?.stop();
  }
}
