import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { packageVersion } from '../config/package-version';
import { createHttpApp, sameStoreCheck, type HttpAppOptions } from './app';

/** A running HTTP service. */
export interface HttpServer {
  /** `http://host:port` */
  url: string;
  /** Stops accepting requests, ends event streams and closes the server. */
  close(): Promise<void>;
}

/**
 * Starts the HTTP API and dashboard. Binds to 127.0.0.1 by default: exposing it further is a
 * deliberate choice (`host: '0.0.0.0'`, ideally with a token). It answers only requests whose
 * `Host` names the address it listens on or one of `allowedHosts` (421 otherwise).
 *
 * @throws InvalidSettingError for a malformed `allowedHosts` entry or token.
 * @throws StreamStoreError when the stream store cannot be opened, or the workers write their
 *   words to another store than `streamStore` (`stream-store-mismatch`, naming both).
 */
export async function startHttpServer(options: HttpAppOptions & { port?: number; host?: string }): Promise<HttpServer> {
  // Told at start, not by readers waiting for words that go elsewhere.
  if (options.streamStore !== undefined) await sameStoreCheck(options.client, options.streamStore, options.deployment ?? options.client.taskQueue)();
  const { app, reader, hub, hosts, mcp } = createHttpApp({ version: packageVersion(), ...options });
  const host = options.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port ?? 8080, hostname: host }, (info: AddressInfo) => {
      // Before the first connection is accepted: the port is known only now (port 0).
      hosts.listeningOn(info);
      const shownHost = info.address.includes(':') ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${shownHost}:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            reader.close();
            hub?.close();
            void mcp.close();
            if ('closeAllConnections' in server) (server as { closeAllConnections(): void }).closeAllConnections();
            server.close(() => done());
          }),
      });
    });
    server.once('error', reject);
  });
}
