import { createServer } from 'node:net';

/**
 * Resolves to a TCP port that was free on `host` a moment ago (the OS picks it). Meant for
 * tests and loopback ports of this process's own; another process may take the port before it is used.
 */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.once('error', fail);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() => (port === undefined ? fail(new Error(`could not read the port bound on ${host}`)) : done(port)));
    });
  });
}
