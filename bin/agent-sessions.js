#!/usr/bin/env node
'use strict';
// Runs the compiled CLI (built by `npm run build`, which `npm ci` runs through `prepare`);
// falls back to the TypeScript sources through tsx in a checkout that has not been built. On a
// Node older than the project needs, re-runs itself on Node 24 from the per-user cache first.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const compiled = join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
// V8's compiled code of every module the command loads is kept on disk (NODE_COMPILE_CACHE, else
// Node's folder under the system's temporary folder) and reused by the next command: most of a
// short command's start-up is compiling @temporalio/client and gRPC, the same code every time.
require('node:module').enableCompileCache?.();
if (require('../scripts/require-node.cjs').rerunOnNewNode()) {
  // The same command runs again on a new enough Node; this process only waits for it.
} else if (existsSync(compiled) && process.env.AGENT_SESSIONS_FROM_SOURCE !== '1') {
  require(compiled).main(process.argv);
} else {
  // Both hooks: the CLI loads its commands with import(), which the CommonJS hook alone misses.
  require('tsx/cjs');
  require('tsx/esm/api').register();
  require(join(__dirname, '..', 'src', 'cli', 'main.ts')).main(process.argv);
}
