import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { executableName, executableProblem } from './executables';
import { compareVersions, goInstall, moveBuiltFolder } from './go-install';
import { resolveCacheDir } from './temporal-cli';
import { packageRoot } from './temporal-server-config';

/** The Temporal Web UI release the dev server serves (`github.com/temporalio/ui-server/v2`). */
export const TEMPORAL_UI_VERSION = '2.58.1';

/**
 * The Go its module asks for (`go 1.26.10` in its go.mod). An older local Go builds it with this
 * toolchain, which the go command fetches from the Go module proxy once per user.
 */
const UI_GO_VERSION = '1.26.10';
const UI_TOOLCHAIN = 'go1.27.3';

/** Thrown when the UI binary is not cached and cannot be built; the message says what to do. */
export class TemporalUiUnavailableError extends Error {
  override readonly name = 'TemporalUiUnavailableError';

  constructor(problem: string, folder: string) {
    super(
      `The Temporal Web UI ${TEMPORAL_UI_VERSION} is not in ${folder} and could not be built: ${problem}. ` +
        'Install Go 1.21 or newer (it fetches the toolchain the UI needs from the Go proxy) and run again, ' +
        'or start the dev server without its Web UI (startDevServer({ uiPort: false }), as the test server runs).',
    );
  }
}

/**
 * Finds the Web UI server in the per-user cache (`<cache>/bin/temporal-ui-<version>/temporal-ui-server`),
 * building it when missing. `go install …@v2.58.1` cannot build it (its go.mod needs
 * go.temporal.io/api v1.64.0, which the Go proxy does not serve), so it is built inside a module
 * of ours, `deploy/temporal-ui/` (go.mod and go.sum), that requires it with api v1.64.3.
 *
 * @throws {TemporalUiUnavailableError} Go is missing or the build failed.
 */
export async function findTemporalUiBinary(options: { env?: NodeJS.ProcessEnv; cacheDir?: string; output?: NodeJS.WritableStream } = {}): Promise<string> {
  const env = options.env ?? process.env;
  const cacheDir = options.cacheDir ?? resolveCacheDir(env);
  const dir = join(cacheDir, 'bin', `temporal-ui-${TEMPORAL_UI_VERSION}`);
  const binary = join(dir, executableName('temporal-ui-server'));
  const problem = async (): Promise<string | undefined> => {
    const missing = await executableProblem(binary);
    return missing ? `${binary}: ${missing}` : undefined;
  };
  if (!(await problem())) return binary;

  const module = join(cacheDir, 'build', `temporal-ui-${TEMPORAL_UI_VERSION}`);
  await mkdir(module, { recursive: true });
  for (const file of ['go.mod', 'go.sum', 'tools.go']) await copyFile(join(packageRoot(), 'deploy', 'temporal-ui', file), join(module, file));
  const scratch = `${dir}.building`;
  const built = await goInstall({
    label: `the Temporal Web UI ${TEMPORAL_UI_VERSION}`,
    packages: [`github.com/temporalio/ui-server/v2/cmd/server@v${TEMPORAL_UI_VERSION}`],
    command: {
      args: ['build', '-mod=mod', '-o', join(scratch, executableName('temporal-ui-server')), 'github.com/temporalio/ui-server/v2/cmd/server'],
      cwd: module,
      extraEnv: (local) => (compareVersions(local, UI_GO_VERSION) >= 0 ? {} : { GOTOOLCHAIN: UI_TOOLCHAIN }),
    },
    minGoVersion: '1.21',
    cacheDir,
    lockName: `temporal-ui-${TEMPORAL_UI_VERSION}-install.lock`,
    gobin: scratch,
    target: binary,
    problem,
    place: moveBuiltFolder(scratch, dir),
    reason: `no Temporal Web UI ${TEMPORAL_UI_VERSION} in the per-user cache`,
    env,
    output: options.output ?? process.stderr,
    lockTimeoutMs: 30 * 60_000,
  });
  if (built.failure !== undefined) throw new TemporalUiUnavailableError(built.failure, dir);
  return binary;
}
