/** The benchmark's output: the printed table, and the JSON file with machine, versions and figures. */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { arch, cpus, platform, release, totalmem, type as osType } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TEMPORAL_CLI_VERSION } from '../src/devserver';

/** One line of the table. `ratio` is ours ÷ baseline; `met` is `null` where no target applies. */
export interface Row {
  measurement: string;
  ours: string;
  baseline: string;
  ratio: number | null;
  target: string;
  met: boolean | null;
}

/** What one measurement hands back: its table lines, every figure it took, and why a target was missed. */
export interface MeasurementResult {
  name: string;
  title: string;
  rows: Row[];
  figures: unknown;
  notes: string[];
  seconds?: number;
}

const HEADERS = ['measurement', 'ours', 'baseline', 'ratio', 'target', 'met?'] as const;

/** The table, one section per measurement, with its notes under it. */
export function renderTable(results: readonly MeasurementResult[]): string {
  const cells = (row: Row): string[] => [
    row.measurement,
    row.ours,
    row.baseline,
    row.ratio === null || !Number.isFinite(row.ratio) ? '—' : `${row.ratio.toFixed(3)}×`,
    row.target,
    row.met === null ? '' : row.met ? 'yes' : 'NO',
  ];
  const all = results.flatMap((result) => result.rows.map(cells));
  const widths = HEADERS.map((header, k) => Math.max(header.length, ...all.map((row) => [...row[k]!].length)));
  const pad = (text: string, k: number): string => {
    const gap = ' '.repeat(Math.max(0, widths[k]! - [...text].length));
    return k === 0 || k === 4 || k === 5 ? text + gap : gap + text;
  };
  const line = (row: readonly string[]): string => row.map(pad).join('  ').trimEnd();
  const rule = widths.map((w) => '─'.repeat(w)).join('  ');
  const out: string[] = [line(HEADERS), rule];
  for (const result of results) {
    out.push('', `## ${result.title}${result.seconds !== undefined ? ` (${result.seconds.toFixed(0)} s)` : ''}`);
    for (const row of result.rows) out.push(line(cells(row)));
    for (const note of result.notes) out.push(...wrap(`note: ${note}`, Math.max(rule.length, 80), '      '));
  }
  return out.join('\n');
}

function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/)) {
    const candidate = current === '' ? word : `${current} ${word}`;
    if ([...candidate].length > width && current !== '') {
      lines.push(current);
      current = `${indent}${word}`;
    } else {
      current = candidate;
    }
  }
  if (current !== '') lines.push(current);
  return lines;
}

/** The machine the figures were taken on. */
export function machineInfo(): Record<string, unknown> {
  const list = cpus();
  return {
    os: `${osType()} ${release()}`,
    platform: platform(),
    arch: arch(),
    cpus: list.length,
    cpuModel: list[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  };
}

/** Versions of Node, the Temporal SDK packages and the Temporal CLI / server. */
export async function versions(cliPath: string | undefined, serverVersion: string | undefined): Promise<Record<string, unknown>> {
  const sdk: Record<string, string> = {};
  for (const pkg of ['client', 'worker', 'workflow', 'common', 'proto', 'core-bridge', 'testing']) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      sdk[`@temporalio/${pkg}`] = (require(`@temporalio/${pkg}/package.json`) as { version: string }).version;
    } catch {
      // Not installed: nothing to report.
    }
  }
  let cli: string | undefined;
  if (cliPath !== undefined) {
    try {
      const { stdout } = await promisify(execFile)(cliPath, ['--version']);
      cli = stdout.trim();
    } catch {
      cli = undefined;
    }
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const project = require('../package.json') as { version: string };
  return {
    node: process.version,
    v8: process.versions.v8,
    agentSessions: project.version,
    ...sdk,
    temporalCli: cli ?? 'not used (TEMPORAL_ADDRESS was set)',
    // A CLI built with `go install` reports 0.0.0-DEV; this is the version the project builds.
    temporalCliPinned: TEMPORAL_CLI_VERSION,
    temporalCliPath: cliPath ?? null,
    temporalServer: serverVersion ?? 'unknown',
  };
}

/** Writes `bench/results/<ISO time>.json` and `bench/results/latest.json`; returns the first path. */
export function writeResults(report: unknown, startedAt: Date): string {
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
  const file = join(dir, `${stamp}.json`);
  const text = `${JSON.stringify(report, null, 2)}\n`;
  writeFileSync(file, text);
  writeFileSync(join(dir, 'latest.json'), text);
  return file;
}

/** `1,234` */
export function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Milliseconds with two decimals. */
export function ms(value: number): string {
  return value.toFixed(2);
}

/** `p50 / p95 / p99 ms` */
export function pcts(summary: { p50: number; p95: number; p99: number }): string {
  return `${ms(summary.p50)} / ${ms(summary.p95)} / ${ms(summary.p99)}`;
}
