/**
 * HTTP overhead: `POST /sessions/{id}/todo_write` through the project's HTTP service (in this
 * process, over a keep-alive connection) next to `client.todoWrite` on the same client.
 */
import { startHttpServer } from '../src/http/server';
import { pcts, type MeasurementResult, type Row } from './report';
import { calls, interleaved, POLICY, todoList, type Bench } from './setup';
import { summarize } from './stats';

const SIZES = [3, 300] as const;
const TARGET = 1.1;

export async function measureHttp(bench: Bench): Promise<MeasurementResult> {
  const measured = bench.quick ? 60 : 500;
  const block = bench.quick ? 30 : 200;
  const warmup = bench.quick ? 3 : 10;
  const c = calls(bench);
  const server = await startHttpServer({ client: bench.sessions, policy: POLICY, port: 0 });
  const rows: Row[] = [];
  const figures: Record<string, unknown> = { parameters: { sizes: SIZES, measuredPerPath: measured, iterationsPerSession: block, warmupPerSession: warmup }, url: server.url };
  try {
    for (const size of SIZES) {
      const http: number[] = [];
      const library: number[] = [];
      let step = 0;
      while (http.length < measured) {
        const hid = bench.id(`http${size}`);
        const lid = bench.id(`http${size}-lib`);
        const post = async (args: unknown): Promise<void> => {
          const response = await fetch(`${server.url}/sessions/${encodeURIComponent(hid)}/todo_write`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(args),
          });
          const text = await response.text();
          if (!response.ok) throw new Error(`POST todo_write answered ${response.status}: ${text}`);
        };
        for (let i = 0; i < warmup + block && http.length < measured; i++) {
          const args = todoList(size, step++);
          const [viaHttp, viaLibrary] = await interleaved([() => post(args), () => c.oursWithStart(lid, args)], i);
          if (i < warmup) continue;
          http.push(viaHttp!);
          library.push(viaLibrary!);
        }
        await Promise.all([bench.sessions.close(hid), bench.sessions.close(lid)]);
      }
      const h = summarize(http);
      const l = summarize(library);
      figures[`${size}`] = { ms: { http: h, library: l }, overheadMsP50: h.p50 - l.p50 };
      rows.push({ measurement: `${size} items, HTTP vs client.todoWrite`, ours: pcts(h), baseline: pcts(l), ratio: h.p50 / l.p50, target: `≤ ${TARGET}× p50`, met: h.p50 / l.p50 <= TARGET });
      bench.progress(`http ${size} items: p50 ${h.p50.toFixed(2)} vs ${l.p50.toFixed(2)} ms`);
    }
  } finally {
    await server.close();
  }
  return { name: 'http', title: 'HTTP overhead — todo_write ms p50 / p95 / p99; ours: through the HTTP service; baseline: client.todoWrite', rows, figures, notes: [] };
}
