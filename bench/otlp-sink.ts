/**
 * A local OTLP/HTTP collector for the benchmark: it accepts every export (`POST /v1/traces`),
 * counts requests and bytes, and answers 200 at once, so the traced figures measure what
 * exporting costs the process that traces, not what a real backend does with the spans.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running sink, and what it received. */
export interface OtlpSink {
  /** Its base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  readonly url: string;
  readonly received: { requests: number; bytes: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const received = { requests: 0, bytes: 0 };
  const server: Server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (received.bytes += chunk.length));
    request.on('end', () => {
      received.requests++;
      // An empty ExportTraceServiceResponse: everything accepted.
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
