/**
 * The lines of a `.env` file that Node's parser (util.parseEnv) skips without a word: neither
 * blank, nor a `#` comment, nor `NAME=value`. Returns their 1-based line numbers, so that a typo
 * such as `PORT 8080` is reported instead of silently leaving the default in force.
 */
export function malformedDotenvLines(text: string): number[] {
  const lines = text.split(/\r?\n/);
  const malformed: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0 || line.slice(0, eq).replace(/^export\s+/, '').trim() === '') {
      malformed.push(i + 1);
      continue;
    }
    i = endOfValue(lines, i, line.slice(eq + 1).trim());
  }
  return malformed;
}

/**
 * The `.env` text with its malformed lines blanked: Node's parser reads a line without `=` as the
 * start of a name that runs on to the next line's `=`, so `FOO 1` would swallow the `PORT=…` under it.
 * Blanking keeps the line numbers of everything else.
 */
export function wellFormedDotenv(text: string): string {
  const malformed = new Set(malformedDotenvLines(text));
  if (malformed.size === 0) return text;
  return text
    .split(/\r?\n/)
    .map((line, i) => (malformed.has(i + 1) ? '' : line))
    .join('\n');
}

/** A quoted value may span lines up to its closing quote (when there is one); returns its last line. */
function endOfValue(lines: readonly string[], start: number, value: string): number {
  const quote = value[0];
  if (quote !== '"' && quote !== "'" && quote !== '`') return start;
  if (value.indexOf(quote, 1) !== -1) return start;
  for (let j = start + 1; j < lines.length; j++) {
    if ((lines[j] as string).includes(quote)) return j;
  }
  // Never closed: Node takes the quote literally and reads the next line afresh.
  return start;
}
