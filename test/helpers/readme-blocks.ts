/**
 * The code blocks of the README and docs/*.md as the examples test reads them (the rules are also
 * in docs/development.md, "Examples in the documentation"):
 * - every ```sh block runs, in order, in one shell, unless the line right above its fence is an
 *   HTML comment starting `<!-- not run` (say why in it);
 * - whole-line `# ` comments directly under a command are the output that command shows (stdout
 *   and stderr together, as a terminal shows them); `…` (or `...`) stands for any text within a
 *   line, and a line holding only `…` for any number of lines;
 * - a comment after a blank line, or at the start of a block, is a note.
 */

export interface Fence {
  /** The fence's language (`sh`, `text`, …); '' when none. */
  lang: string;
  /** 1-based line, in its document, of the block's first content line. */
  line: number;
  lines: string[];
  /** The line right above the opening fence. */
  above: string;
}

export function fences(markdown: string): Fence[] {
  const all = markdown.split('\n');
  const found: Fence[] = [];
  for (let i = 0; i < all.length; i++) {
    const open = /^(```|~~~)\s*([\w+-]*)\s*$/.exec((all[i] as string).trimStart());
    if (open === null) continue;
    const indent = (all[i] as string).length - (all[i] as string).trimStart().length;
    const start = i + 1;
    let end = start;
    while (end < all.length && !(all[end] as string).trimStart().startsWith(open[1] as string)) end++;
    const lines = all.slice(start, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)));
    found.push({ lang: open[2] as string, line: start + 1, lines, above: i > 0 ? (all[i - 1] as string) : '' });
    i = end;
  }
  return found;
}

export const isSkipped = (fence: Fence): boolean => /^<!--\s*not run\b/.test(fence.above.trim());

/** One command line and the line of its document it came from. */
export interface ScriptLine {
  text: string;
  line: number;
}

export interface OutputGroup {
  line: number;
  expected: string[];
}

export interface RunnableBlock {
  line: number;
  /** The block's lines, each output group replaced by a marker command. */
  lines: ScriptLine[];
  outputs: OutputGroup[];
}

const COMMENT = /^\s*#( |$)/;

/** Splits a ```sh block into its commands and the output groups shown under them. */
export function runnable(fence: Fence, marker: (group: number) => string): RunnableBlock {
  const lines: ScriptLine[] = [];
  const outputs: OutputGroup[] = [];
  let previous: 'command' | 'output' | 'other' = 'other';
  fence.lines.forEach((text, i) => {
    const line = fence.line + i;
    if (COMMENT.test(text) && previous !== 'other') {
      const shown = text.replace(/^\s*# ?/, '');
      if (previous === 'command') {
        outputs.push({ line, expected: [shown] });
        lines.push({ text: marker(outputs.length - 1), line });
      } else {
        (outputs[outputs.length - 1] as OutputGroup).expected.push(shown);
      }
      previous = 'output';
      return;
    }
    lines.push({ text, line });
    previous = text.trim() === '' || COMMENT.test(text) ? 'other' : 'command';
  });
  return { line: fence.line, lines, outputs };
}

/** Whether `actual` is what the document shows, with `…` or `...` as wildcards. */
export function matchesShown(expected: readonly string[], actual: string): boolean {
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = expected
    .map((line) => {
      if (/^(…|\.\.\.)$/.test(line.trim())) return '(?:[^\\n]*\\n)*?';
      return `${line
        .split(/…|\.\.\./)
        .map(escape)
        .join('[^\\n]*')}\\n`;
    })
    .join('');
  return new RegExp(`^${pattern}$`).test(actual);
}
