import assert from 'node:assert/strict';

/**
 * The text of a Markdown document under its `heading` line (`## Configuration`, the level
 * included), up to the next heading of the same or a higher level: subsections stay in, and a `#`
 * line inside a code block is no heading.
 */
export function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  assert.ok(start !== -1, `there is a section ${heading}`);
  const level = heading.indexOf(' ');
  const lines = markdown.slice(start + heading.length + 2).split('\n');
  let inFence = false;
  const end = lines.findIndex((line) => {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    return !inFence && new RegExp(`^#{1,${level}} `).test(line);
  });
  return (end === -1 ? lines : lines.slice(0, end)).join('\n');
}
