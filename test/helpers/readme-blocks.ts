/**
 * The README's code blocks as the README examples test reads them (the rules are also in the
 * README, "Examples in this README"):
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
  /** 1-based README line of the block's first content line. */
  line: number;
  lines: string[];
  /** The line right above the opening fence. */
  above: string;
}

export function fences(markdown: string): Fence[] {
  const all = markdown.split('\n');
  const found: Fence[] = [];
  for (let i = 0; i < all.length; i++) {
    const open = /^(```|~~~)\s*([\w+-]*)\s*$/.exec(all[i] as string);
    if (open === null) continue;
    const start = i + 1;
    let end = start;
    while (end < all.length && !(all[end] as string).startsWith(open[1] as string)) end++;
    found.push({ lang: open[2] as string, line: start + 1, lines: all.slice(start, end), above: i > 0 ? (all[i - 1] as string) : '' });
    i = end;
  }
  return found;
}

export const isSkipped = (fence: Fence): boolean => /^<!--\s*not run\b/.test(fence.above.trim());

/** One command line and the README line it came from. */
export interface ScriptLine {
  text: string;
  readmeLine: number;
}

export interface OutputGroup {
  readmeLine: number;
  expected: string[];
}

export interface RunnableBlock {
  readmeLine: number;
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
    const readmeLine = fence.line + i;
    if (COMMENT.test(text) && previous !== 'other') {
      const shown = text.replace(/^\s*# ?/, '');
      if (previous === 'command') {
        outputs.push({ readmeLine, expected: [shown] });
        lines.push({ text: marker(outputs.length - 1), readmeLine });
      } else {
        (outputs[outputs.length - 1] as OutputGroup).expected.push(shown);
      }
      previous = 'output';
      return;
    }
    lines.push({ text, readmeLine });
    previous = text.trim() === '' || COMMENT.test(text) ? 'other' : 'command';
  });
  return { readmeLine: fence.line, lines, outputs };
}

/** Whether `actual` is what the README shows, with `…` or `...` as wildcards. */
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
