import { join } from 'node:path';
import { SessionClient } from '../client';
import type { Settings, TemporalConfig } from '../config';
import { isServing, startDevServer, type DevServerHandle } from '../devserver';
import { startHttpServer, type HttpServer } from '../http/server';
import { createWorker } from '../worker/create-worker';
import { installRuntimeLogging } from '../worker/runtime-logging';
import { clientOptions, temporalOptions } from './command-settings';
import { requirePolicy } from './policy-option';
import { upModel, type UpModel } from './up-demo';

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

async function startLocalServer(settings: Settings, options: LocalServerOptions): Promise<DevServerHandle> {
  const { cacheDir, dataDir, temporalCliPath } = settings.paths;
  return startDevServer({
    port: options.port,
    ...(options.uiPort !== undefined ? { uiPort: options.uiPort } : {}),
    dbFile: options.db ?? join(dataDir, 'temporal.sqlite'),
    cacheDir,
    ...(temporalCliPath !== undefined ? { temporalCliPath } : {}),
  });
}

/** `agent-sessions dev`: the local Temporal server in the foreground. */
export async function runDevServer(settings: Settings, options: LocalServerOptions): Promise<void> {
  const server = await startLocalServer(settings, options);
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

/** Starts the HTTP service of the settings (host, port, token, CORS origins, extra Host names) against `temporal`. */
async function startHttp(settings: Settings, temporal: TemporalConfig): Promise<HttpServer> {
  const { host, port, token, corsOrigins, allowedHosts } = settings.http;
  return startHttpServer({
    client: SessionClient.lazy(clientOptions(settings, temporal)),
    port,
    host,
    ...(settings.policy !== undefined ? { policy: settings.policy } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(corsOrigins.length > 0 ? { corsOrigins } : {}),
    ...(allowedHosts.length > 0 ? { allowedHosts } : {}),
  });
}

/** `agent-sessions serve`: the HTTP API and dashboard until SIGINT/SIGTERM. */
export async function runServe(settings: Settings): Promise<void> {
  const temporal = temporalOptions(settings);
  const server = await startHttp(settings, temporal);
  process.stderr.write(
    `HTTP API and dashboard at ${server.url} (Temporal ${temporal.address})` +
      `${settings.http.token !== undefined ? '; bearer token required' : ''}. Ctrl-C stops it.\n`,
  );
  await untilStopSignal();
  await server.close();
}

/** `agent-sessions worker`: a session worker until SIGINT/SIGTERM. */
export async function runWorker(settings: Settings): Promise<void> {
  const policy = requirePolicy(settings.policy);
  installRuntimeLogging();
  const temporal = temporalOptions(settings);
  const sessionWorker = await createWorker({ ...policy, temporal, cacheDir: settings.paths.cacheDir, agent: settings.agent });
  process.stderr.write(
    `worker polling task queue "${sessionWorker.taskQueue}" on ${temporal.address} (namespace ${sessionWorker.namespace}), ` +
      `allowParallelInProgress=${policy.allowParallelInProgress}\n`,
  );
  const running = sessionWorker.run();
  await Promise.race([untilStopSignal().then(() => sessionWorker.shutdown()), running]);
  await running;
}

/**
 * `agent-sessions up` (`npm start`): a local server (reused when one already answers; none with
 * `TEMPORAL_ADDRESS` set) and a worker, until SIGINT/SIGTERM. The address it chose is given to
 * the worker, the HTTP service and the printed hints; the environment is left as it was. With
 * neither `OPENAI_BASE_URL` nor `OPENAI_API_KEY` set, the worker's agent calls a scripted demo
 * model started here on loopback (see {@link upModel}), and the output says so.
 */
export async function runUp(settings: Settings, options: LocalServerOptions): Promise<void> {
  const policy = requirePolicy(settings.policy);
  let temporal = temporalOptions(settings);
  let server: DevServerHandle | undefined;
  let uiUrl: string | undefined;
  if (!settings.temporal.addressGiven) {
    const address = `127.0.0.1:${options.port}`;
    if (await isServing(address)) {
      process.stderr.write(`reusing the Temporal server that already answers at ${address}\n`);
    } else {
      server = await startLocalServer(settings, options);
      uiUrl = server.uiUrl;
    }
    temporal = { ...temporal, address };
  }
  let http: HttpServer | undefined;
  let model: UpModel | undefined;
  try {
    installRuntimeLogging();
    model = await upModel(settings.agent, policy);
    const sessionWorker = await createWorker({ ...policy, temporal, cacheDir: settings.paths.cacheDir, agent: model.agent });
    http = await startHttp(settings, temporal);
    const env = temporal.address === '127.0.0.1:7233' ? '' : `TEMPORAL_ADDRESS=${temporal.address} `;
    process.stdout.write(
      [
        'agent-sessions is running.',
        `  Temporal server: ${temporal.address} (namespace ${temporal.namespace})${server ? `, state in ${server.dbFile}` : ''}`,
        ...(uiUrl !== undefined ? [`  Temporal Web UI: ${uiUrl}`] : []),
        `  Worker: task queue "${sessionWorker.taskQueue}", allowParallelInProgress=${policy.allowParallelInProgress}`,
        ...model.lines,
        `  Dashboard and HTTP API: ${http.url}  (OpenAPI: ${http.url}/openapi.json)`,
        'Try, in another terminal:',
        `  ${env}npx agent-sessions chat demo "${model.tryMessage}"   (and watch it on ${http.url}/#/sessions/demo)`,
        `  ${env}npx agent-sessions usage demo`,
        'or drive a list yourself:',
        `  ${env}npx agent-sessions start demo-list`,
        `  ${env}npx agent-sessions write demo-list --json '{"todos":[{"content":"Run lint","status":"in_progress"},{"content":"Fix errors","status":"pending"}]}'`,
        `  ${env}npx agent-sessions todos demo-list`,
        `  curl -s ${http.url}/sessions/demo-list/todos`,
        'Ctrl-C stops everything.',
        '',
      ].join('\n'),
    );
    const running = sessionWorker.run();
    await Promise.race([untilStopSignal().then(() => sessionWorker.shutdown()), running]);
    await running;
  } finally {
    await http?.close();
    await model?.close();
    await server?.stop();
  }
}
