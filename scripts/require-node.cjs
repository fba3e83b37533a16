'use strict';
/* global process */
// Stops a command at once, in one line, on a Node.js older than the project needs (package.json
// "engines"): without this, an old Node fails later with an error that does not say why.
// Plain ES5-era JavaScript so that any Node can run it.
var NEEDED = 22;
var found = process.versions.node;
if (Number(found.split('.')[0]) < NEEDED) {
  process.stderr.write(
    'agent-sessions needs Node.js ' + NEEDED + ' or newer and this is ' + found +
      ': run `export PATH="$(scripts/ensure-node.sh):$PATH"` (it installs Node 24 from the npm registry once) and try again\n',
  );
  process.exit(1);
}
