import { BookIndex } from '../../src/store/book-index.ts';
import { bookJson } from '../../src/books/model.ts';
const index = new BookIndex();
const words = ['river', 'stone', 'garden', 'night', 'winter', 'silver', 'crown', 'shadow', 'glass', 'ember', 'Émile', 'Zoë'];
for (let id = 1; id <= 200_000; id++) index.set(id, bookJson({ id, title: `The ${words[id % 12]} of ${words[(id * 7) % 11]} ${id}`, author: `Author ${words[(id * 3) % 12]} ${id % 5000}`, year: 1900 + (id % 120) }));
const snap = index.snapshot();
for (const flags of ['giu', 'gi', 'g']) {
  const re = new RegExp('zzzz', flags);
  const times: number[] = [];
  for (const { text } of snap.pages) { const t = performance.now(); re.lastIndex = 0; while (re.exec(text) !== null); times.push(performance.now() - t); }
  console.log(flags, times.slice(0, 5).map((t) => t.toFixed(2)).join(' '), 'max', Math.max(...times).toFixed(2), 'sum', times.reduce((a, b) => a + b).toFixed(1));
}
const t = performance.now(); for (const { text } of snap.pages) text.toLowerCase().indexOf('zzzz'); console.log('lower+indexOf', (performance.now() - t).toFixed(1));
