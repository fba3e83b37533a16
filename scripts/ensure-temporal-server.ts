/**
 * Finds the Temporal server and SQL tool the cluster runs (the release of
 * src/devserver/temporal-release.ts) in the per-user cache, building them with Go from the module
 * proxy when they are missing: the first run on a machine. `.ci/run` starts this in the
 * background so the build overlaps the installs instead of waiting in front of the tests; the
 * build holds a lock, so a cluster run that starts first waits for it rather than building twice.
 * Prints the server's path.
 */
import { findTemporalServerBinaries } from '../src/devserver';

const began = Date.now();
findTemporalServerBinaries().then(
  (binaries) => process.stdout.write(`temporal-server ${binaries.version}: ${binaries.server} (${Math.round((Date.now() - began) / 1000)} s)\n`),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
