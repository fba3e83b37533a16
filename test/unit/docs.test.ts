import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { headingAnchors, headingSlug, markdownLinks } from '../markdown';

const ROOT = join(__dirname, '..', '..');
const DOCS = join(ROOT, 'docs');
/** The front door and every topic file. */
const FILES = [join(ROOT, 'README.md'), ...readdirSync(DOCS).filter((name) => name.endsWith('.md')).sort().map((name) => join(DOCS, name))];

/**
 * What is wrong with the relative links of `file` (whose text is `text`): each link to a file
 * that does not exist, or to a heading that a Markdown file does not have, as `file:line target: why`.
 * Links to other sites are not followed.
 */
function brokenLinks(file: string, text: string, read: (path: string) => string = (path) => readFileSync(path, 'utf8')): string[] {
  const problems: string[] = [];
  for (const { target, line } of markdownLinks(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const hash = target.indexOf('#');
    const path = hash === -1 ? target : target.slice(0, hash);
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const where = `${relative(ROOT, file)}:${line} ${target}`;
    const destination = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    if (path !== '' && !existsSync(destination)) {
      problems.push(`${where}: no file ${relative(ROOT, destination)}`);
      continue;
    }
    if (anchor === undefined || !destination.endsWith('.md') || (path !== '' && statSync(destination).isDirectory())) continue;
    const anchors = headingAnchors(destination === file ? text : read(destination));
    if (!anchors.has(anchor)) problems.push(`${where}: ${relative(ROOT, destination)} has no heading #${anchor} (it has: ${[...anchors].join(', ')})`);
  }
  return problems;
}

describe('the docs', () => {
  test('headings get the anchors GitHub gives them', () => {
    assert.equal(headingSlug("The session's events"), 'the-sessions-events');
    assert.equal(headingSlug('`npm start` and the local Temporal server'), 'npm-start-and-the-local-temporal-server');
    assert.equal(headingSlug('Why `todo_write` is an Update, and why replay after a policy change is safe'), 'why-todo_write-is-an-update-and-why-replay-after-a-policy-change-is-safe');
    assert.equal(headingSlug('Kubernetes: the Temporal Worker Controller'), 'kubernetes-the-temporal-worker-controller');
    assert.equal(headingSlug('Speed — measured, on 2 cores'), 'speed--measured-on-2-cores');
    assert.equal(headingSlug('What still needs `patched()`'), 'what-still-needs-patched');
    assert.equal(headingSlug('**Bold** and [a link](x.md)'), 'bold-and-a-link');
    assert.deepEqual(
      [...headingAnchors('# Notes\n\n## Notes\n\n```\n## Notes\n```\n\n## Notes\n### Other\n')],
      ['notes', 'notes-1', 'notes-2', 'other'],
      'a repeated heading is numbered, and a heading inside a code block is not one',
    );
  });

  test('the link check finds a missing file, a missing heading and a link wrapped over two lines', () => {
    const file = join(DOCS, 'probe.md');
    const text = [
      '# Probe',
      '',
      'See [the model](model.md), [nothing](no-such-file.md), [a heading](#probe), [no heading](#nowhere),',
      'a [link over',
      'two lines](model.md#no-such-heading), `[code](not-a-link.md)`, and [a site](https://temporal.io).',
      '',
      '```md',
      '[in a code block](not-a-link-either.md)',
      '```',
    ].join('\n');
    const problems = brokenLinks(file, text, () => '# The model\n');
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.match(problems[0]!, /^docs\/probe\.md:3 no-such-file\.md: no file docs\/no-such-file\.md$/);
    assert.match(problems[1]!, /^docs\/probe\.md:3 #nowhere: docs\/probe\.md has no heading #nowhere/);
    assert.match(problems[2]!, /^docs\/probe\.md:4 model\.md#no-such-heading: docs\/model\.md has no heading #no-such-heading \(it has: the-model\)$/);
  });

  test('every link in README.md and docs/*.md points at a file that exists, and at a heading it has', () => {
    const problems = FILES.flatMap((file) => brokenLinks(file, readFileSync(file, 'utf8')));
    assert.deepEqual(problems, []);
  });

  test('README.md links every docs/ file, and each one opens by saying what a reader finds there', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const linked = new Set(markdownLinks(readme).map(({ target }) => target.split('#')[0]));
    for (const file of FILES.slice(1)) {
      const name = relative(ROOT, file);
      assert.ok(linked.has(name), `README.md does not link ${name}`);
      const [title, , opening] = readFileSync(file, 'utf8').split('\n');
      assert.match(title ?? '', /^# \S/, `${name} starts with its title`);
      assert.match(opening ?? '', /^What you will find here: /, `${name} opens with what a reader finds there`);
    }
  });

  test('the README stays the front door: at most 250 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    assert.ok(lines <= 250, `README.md has ${lines} lines; move reference text into docs/`);
  });
});
