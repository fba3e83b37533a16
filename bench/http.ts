/**
 * HTTP overhead: `POST /sessions/{id}/todo_write` through the project's HTTP service (in this
 * process, over a keep-alive connection) next to `client.todoWrite` on the same client.
 *
 * Two more calls in the same loop take the difference apart: the same `client.todoWrite` under
 * the service's time limit (`temporalCalls(...).change`, what the route wraps it in), and a POST
 * of the same body to a bare `node:http` server in this process that parses it and answers JSON
 * of the write result's size (the loopback hop, `fetch` and Node's HTTP, with no framework and
 * no Temporal). What is left of the gap is the service's own request handling (Hono, the route's
 * schemas and guards, the strict body read, the JSON answer).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { startHttpServer } from '../src/http/server';
import { temporalCalls } from '../src/http/temporal-calls';
import { pcts, type MeasurementResult, type Row } from './report';
import { calls, interleaved, POLICY, todoList, type Bench } from './setup';
import { summarize } from './stats';

const SIZES = [3, 300] as const;
const TARGET = 1.1;

/** A server that reads a JSON body, parses it and answers `answer`: HTTP on loopback and nothing else. */
async function startEchoServer(answer: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

async function post(url: string, args: unknown): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${url} answered ${response.status}: ${text}`);
  return text;
}

export async function measureHttp(bench: Bench): Promise<MeasurementResult> {
  const measured = bench.quick ? 60 : 500;
  const block = bench.quick ? 30 : 200;
  const warmup = bench.quick ? 3 : 10;
  const c = calls(bench);
  const server = await startHttpServer({ client: bench.sessions, policy: POLICY, port: 0 });
  const limited = temporalCalls(bench.sessions, 10_000);
  const rows: Row[] = [];
  const notes: string[] = [];
  const figures: Record<string, unknown> = { parameters: { sizes: SIZES, measuredPerPath: measured, iterationsPerSession: block, warmupPerSession: warmup }, url: server.url };
  try {
    for (const size of SIZES) {
      const http: number[] = [];
      const library: number[] = [];
      const underLimit: number[] = [];
      const hop: number[] = [];
      let step = 0;
      // The bare server answers what the service answers for a write of this size.
      const sampleId = bench.id(`http${size}-sample`);
      const sample = await post(`${server.url}/sessions/${encodeURIComponent(sampleId)}/todo_write`, todoList(size, 0));
      await bench.sessions.close(sampleId);
      const echo = await startEchoServer(sample);
      try {
        while (http.length < measured) {
          const hid = bench.id(`http${size}`);
          const lid = bench.id(`http${size}-lib`);
          const tid = bench.id(`http${size}-limit`);
          for (let i = 0; i < warmup + block && http.length < measured; i++) {
            const args = todoList(size, step++);
            const [viaHttp, viaLibrary, viaLimit, viaHop] = await interleaved(
              [
                () => post(`${server.url}/sessions/${encodeURIComponent(hid)}/todo_write`, args),
                () => c.oursWithStart(lid, args),
                () => {
                  const updateId = randomUUID();
                  return limited.change(tid, () => bench.sessions.todoWrite(tid, args, { updateId }), updateId);
                },
                () => post(echo.url, args),
              ],
              i,
            );
            if (i < warmup) continue;
            http.push(viaHttp!);
            library.push(viaLibrary!);
            underLimit.push(viaLimit!);
            hop.push(viaHop!);
          }
          await Promise.all([hid, lid, tid].map((id) => bench.sessions.close(id)));
        }
      } finally {
        await echo.close();
      }
      const h = summarize(http);
      const l = summarize(library);
      const t = summarize(underLimit);
      const e = summarize(hop);
      const gap = h.p50 - l.p50;
      const limitCost = t.p50 - l.p50;
      const rest = gap - limitCost - e.p50;
      figures[`${size}`] = {
        ms: { http: h, library: l, libraryUnderTimeLimit: t, bareHttpHop: e },
        overheadMsP50: gap,
        parts: { timeLimitMsP50: limitCost, bareHttpHopMsP50: e.p50, serviceHandlingMsP50: rest },
      };
      rows.push({ measurement: `${size} items, HTTP vs client.todoWrite`, ours: pcts(h), baseline: pcts(l), ratio: h.p50 / l.p50, target: `≤ ${TARGET}× p50`, met: h.p50 / l.p50 <= TARGET });
      notes.push(
        `${size} items: HTTP adds ${gap.toFixed(2)} ms (p50). Of it, in the same loop: the service's time limit around the client call ${limitCost.toFixed(2)} ms ` +
          `(${t.p50.toFixed(2)} against ${l.p50.toFixed(2)}), a bare loopback POST of the same body to node:http answering the same JSON ${e.p50.toFixed(2)} ms, ` +
          `and the remaining ${rest.toFixed(2)} ms the service's own request handling (Hono, the route's schemas and guards, the body read, the answer).`,
      );
      bench.progress(`http ${size} items: p50 ${h.p50.toFixed(2)} vs ${l.p50.toFixed(2)} ms (time limit +${limitCost.toFixed(2)}, bare hop ${e.p50.toFixed(2)})`);
    }
  } finally {
    await server.close();
  }
  return { name: 'http', title: 'HTTP overhead — todo_write ms p50 / p95 / p99; ours: through the HTTP service; baseline: client.todoWrite', rows, figures, notes };
}
