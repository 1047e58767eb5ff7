import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

function book(id: number): string {
  const words = ['river', 'stone', 'garden', 'night', 'winter', 'silver', 'crown', 'shadow', 'glass', 'ember', 'Émile', 'Zoë'];
  return JSON.stringify({ id, title: `The ${words[id % 12]} of ${words[(id * 7) % 11]} ${id}`, author: `Author ${id % 5000}`, year: 1900 + (id % 120) });
}

/** An export file of `count` generated books (ids 1..count), written a chunk at a time, as `export` writes it: `import` loads it into a data directory. */
export async function writeExport(path: string, count: number): Promise<void> {
  const out = createWriteStream(path);
  for (let from = 1; from <= count; from += 10_000) {
    const lines: string[] = [];
    for (let id = from; id < Math.min(count + 1, from + 10_000); id++) lines.push(book(id));
    if (!out.write(`${from === 1 ? '[\n' : ',\n'}${lines.join(',\n')}`)) await once(out, 'drain');
  }
  out.end('\n]\n');
  await once(out, 'close');
}
