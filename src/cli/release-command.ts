import { Client, Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { connectionOptions, type Settings } from '../config';
import type { PromoteResult, ReleaseStatus, ReleaseTarget } from '../release/release';
import type { VersionRegistration } from '../worker/version-registration';
import { commandSettings, temporalOptions } from './command-settings';
import { UsageError } from './policy-option';

const DEPLOYMENT_HELP = 'the Worker Deployment (env AGENT_SESSIONS_DEPLOYMENT; default: the task queue, agent-sessions)';

/**
 * Adds `agent-sessions release status|promote|rollback`: which build the sessions run, and a
 * release that moves them between turns (Worker Deployment Versioning).
 */
export function addReleaseCommand(program: Command): void {
  const release = program
    .command('release')
    .description('see and change which build the sessions run: status, promote BUILD_ID [--ramp PERCENT], rollback');

  release
    .command('status')
    .description('the current and ramping builds, and each version with its status, pollers and open sessions')
    .option('--json', 'print {"deployment","current","ramping","versions":[{"buildId","status","pollers","openSessions"}]}')
    .option('--deployment <name>', DEPLOYMENT_HELP)
    .action(async (options: { json?: boolean; deployment?: string }) =>
      withRelease(options, async (target) => {
        const { releaseStatus } = await import('../release/release');
        const status = await releaseStatus(target);
        process.stdout.write(options.json === true ? `${JSON.stringify(status, null, 2)}\n` : renderStatus(status));
      }),
    );

  release
    .command('promote')
    .description('check BUILD_ID (pollers, carried state of sampled sessions), make it current (or ramping), and move the idle sessions now')
    .argument('<build-id>')
    .option('--ramp <percent>', 'ramp instead: this share (0-100) of sessions and new sessions goes to BUILD_ID', parsePercent)
    .option('--deployment <name>', DEPLOYMENT_HELP)
    .action(async (buildId: string, options: { ramp?: number; deployment?: string }) =>
      withRelease(options, async (target) => {
        const { promoteRelease } = await import('../release/release');
        const result = await promoteRelease(target, buildId, { ...(options.ramp !== undefined ? { rampPercent: options.ramp } : {}), progress: say });
        process.stdout.write(renderMove(result));
      }),
    );

  release
    .command('rollback')
    .description('make the previous current build current again, by the same checks as promote')
    .option('--deployment <name>', DEPLOYMENT_HELP)
    .action(async (options: { deployment?: string }) =>
      withRelease(options, async (target) => {
        const { rollbackRelease } = await import('../release/release');
        process.stdout.write(renderMove(await rollbackRelease(target, { progress: say })));
      }),
    );
}

/** The line a worker prints once its version is registered. */
export function describeRegistration(version: { deploymentName: string; buildId: string }, registration: VersionRegistration): string {
  if (registration.state === 'current') {
    return `build ${version.buildId} is the current version of deployment ${version.deploymentName}${registration.made ? ' (it had none)' : ''}`;
  }
  return (
    `build ${version.buildId} registered with deployment ${version.deploymentName} and waits: build ${registration.current} is current` +
    `${registration.ramping ? ` (${registration.ramping.buildId} ramps at ${registration.ramping.percent}%)` : ''}. ` +
    `Move the sessions to it with: agent-sessions release promote ${version.buildId}`
  );
}

/** Runs `action` with a release target of the command's settings, closing the connection after. */
async function withRelease(options: { deployment?: string }, action: (target: ReleaseTarget) => Promise<void>): Promise<void> {
  const settings = commandSettings(options.deployment !== undefined ? { deployment: options.deployment } : {});
  const connection = await Connection.connect(connectionOptions(temporalOptions(settings)));
  try {
    await action(releaseTarget(settings, new Client({ connection, namespace: settings.temporal.namespace })));
  } finally {
    await connection.close();
  }
}

/** The deployment and task queue of these settings, on `client`. */
export function releaseTarget(settings: Settings, client: Client): ReleaseTarget {
  return { client, namespace: settings.temporal.namespace, deploymentName: settings.release.deployment, taskQueue: settings.temporal.taskQueue };
}

function renderStatus(status: ReleaseStatus): string {
  const lines = [
    `deployment ${status.deployment}`,
    `current    ${status.current ?? 'none (new sessions go to unversioned workers)'}`,
    `ramping    ${status.ramping ? `${status.ramping.buildId} at ${status.ramping.percent}%` : 'none'}`,
  ];
  if (status.versions.length === 0) return `${[...lines, 'no versions yet: no worker of this deployment has polled'].join('\n')}\n`;
  const rows = [['BUILD', 'STATUS', 'POLLERS', 'OPEN SESSIONS'], ...status.versions.map((v) => [v.buildId, v.status, String(v.pollers), String(v.openSessions)])];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  lines.push('', ...rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()));
  return `${lines.join('\n')}\n`;
}

function renderMove(result: PromoteResult): string {
  const mode = result.mode.kind === 'ramping' ? `ramps at ${result.mode.percent}%` : 'is current';
  const left =
    result.remaining > 0
      ? `; ${result.remaining} still on their build (in a turn: each moves when its turn ends${result.mode.kind === 'ramping' ? ', or not in the ramp' : ''})`
      : '';
  return `build ${result.buildId} ${mode} (was ${result.previous ?? 'none'}): ${result.moved} of ${result.woken} open session${result.woken === 1 ? '' : 's'} moved${left}\n`;
}

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

function parsePercent(value: string): number {
  const percent = /^\d{1,3}(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!(percent >= 0 && percent <= 100)) throw new UsageError(`--ramp must be a percentage from 0 to 100, got ${JSON.stringify(value)}`);
  return percent;
}
