/**
 * On a Node.js older than the project needs, every command stops at once with one line that
 * names the version found, the one needed and `scripts/ensure-node.sh`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(__dirname, '..', '..');
const CHECK = join(ROOT, 'scripts', 'require-node.cjs');

/** Runs the check in this Node, told that its version is `version`. */
function checkAs(version: string): { status: number | null; stderr: string; stdout: string } {
  const program = `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: ${JSON.stringify(version)} } });
require(${JSON.stringify(CHECK)}); console.log('went on');`;
  const result = spawnSync(process.execPath, ['-e', program], { encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

test('an old Node stops with one line naming the version found, the one needed and scripts/ensure-node.sh', () => {
  const result = checkAs('20.19.2');
  assert.equal(result.status, 1);
  assert.equal(result.stdout, '', 'nothing else ran');
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0]!, /needs Node\.js 22 or newer and this is 20\.19\.2/);
  assert.match(lines[0]!, /scripts\/ensure-node\.sh/);
});

test('Node 22 and newer go on', () => {
  for (const version of ['22.0.0', '24.22.3', '30.1.0']) {
    const result = checkAs(version);
    assert.equal(result.status, 0, `${version}: ${result.stderr}`);
    assert.equal(result.stdout.trim(), 'went on');
  }
});

test('the check matches package.json engines and comes first in the CLI and the npm scripts', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string }; scripts: Record<string, string>; files: string[] };
  assert.equal(pkg.engines.node, '>=22');
  assert.match(readFileSync(CHECK, 'utf8'), /var NEEDED = 22;/);
  const bin = readFileSync(join(ROOT, 'bin', 'agent-sessions.js'), 'utf8');
  const firstRequire = /require\('([^']+)'\)/.exec(bin)?.[1];
  assert.equal(firstRequire, '../scripts/require-node.cjs', 'the CLI checks before it loads anything');
  for (const name of ['build', 'test', 'bench', 'record-histories']) {
    assert.ok(pkg.scripts[name]!.startsWith('node scripts/require-node.cjs && '), `npm run ${name} checks first: ${pkg.scripts[name]}`);
  }
  for (const name of ['start', 'cluster']) assert.match(pkg.scripts[name]!, /^node bin\/agent-sessions\.js /, `npm run ${name} goes through the CLI's check`);
  assert.ok(pkg.files.includes('scripts/require-node.cjs'), 'the installed package carries the check the CLI requires');
});

test('the machine\'s own old Node, where there is one, is stopped by the CLI itself', (t) => {
  const system = '/usr/bin/node';
  if (!existsSync(system)) return t.skip('no /usr/bin/node');
  const major = Number(spawnSync(system, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim());
  if (!(major < 22)) return t.skip(`/usr/bin/node is Node ${major}`);
  const result = spawnSync(system, [join(ROOT, 'bin', 'agent-sessions.js'), 'todos', 'anything'], { encoding: 'utf8' });
  assert.equal(result.status, 1);
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, /needs Node\.js 22 or newer/);
});
