/**
 * What the docs tests read in a Markdown file: its fenced code blocks, its headings' anchors as
 * GitHub makes them, and its links. Only the Markdown this project writes is handled: ``` fences,
 * ATX headings (`## Title`) and inline links (`[text](target)`, `![alt](target)`).
 */

/** A fenced code block: its info string (`sh exit=1`), its lines, and the line its fence opens on (1-based). */
export interface FencedBlock {
  info: string;
  lines: string[];
  line: number;
}

/** An inline link or image: its target as written, and the line it is on (1-based). */
export interface MarkdownLink {
  target: string;
  line: number;
}

/** Each line of `text` with whether it lies inside a fenced block (fence lines included). */
function linesWithFences(text: string): Array<{ text: string; fenced: boolean }> {
  let open = false;
  return text.split('\n').map((line) => {
    const fence = /^\s*```/.test(line);
    const fenced = open || fence;
    if (fence) open = !open;
    return { text: line, fenced };
  });
}

/** The fenced code blocks of `text`, in order. */
export function fencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let current: FencedBlock | undefined;
  text.split('\n').forEach((line, index) => {
    const fence = /^\s*```(.*)$/.exec(line);
    if (fence !== null && current === undefined) current = { info: fence[1]!.trim(), lines: [], line: index + 1 };
    else if (fence !== null && current !== undefined) {
      blocks.push(current);
      current = undefined;
    } else current?.lines.push(line);
  });
  return blocks;
}

/**
 * The anchor GitHub gives a heading: the rendered text lower-cased, every character that is not a
 * letter, mark, digit, connector (`_`), space or hyphen dropped, spaces made hyphens.
 *
 * @example headingSlug("The session's events") // 'the-sessions-events'
 * @example headingSlug('`npm start` and the local server') // 'npm-start-and-the-local-server'
 */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim();
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of every heading outside code blocks, a repeated one numbered as GitHub does (`-1`, `-2`). */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of linesWithFences(text)) {
    const heading = line.fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line.text);
    if (heading === null) continue;
    const slug = headingSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The inline links and images outside code blocks and code spans, a link's text wrapped over lines included. */
export function markdownLinks(text: string): MarkdownLink[] {
  // Fenced lines and code spans are blanked, keeping their line breaks, so offsets still give lines.
  const prose = linesWithFences(text)
    .map((line) => (line.fenced ? '' : line.text))
    .join('\n')
    .replace(/(`+)[\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, ' '));
  const links: MarkdownLink[] = [];
  for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    links.push({ target: match[1]!, line: prose.slice(0, match.index).split('\n').length });
  }
  return links;
}
