import { BookIndex } from '/work/wt/h10/src/store/book-index.ts';
import { bookJson } from '/work/wt/h10/src/books/model.ts';
import { search } from '/work/wt/h10/src/books/search.ts';
const index = new BookIndex();
const words = ['river', 'stone', 'garden', 'night', 'winter', 'silver', 'crown', 'shadow', 'glass', 'ember', 'Émile', 'Zoë'];
for (let id = 1; id <= 1_000_000; id++) index.set(id, bookJson({ id, title: `The ${words[id % 12]} of ${words[(id * 7) % 11]} ${id}`, author: `Author ${words[(id * 3) % 12]} ${id % 5000}`, year: 1900 + (id % 120) }));
const snap = index.snapshot();
console.log('bytes', snap.bytes);
for (const q of ['zzzz', 'silver', 'e', 'ÉMILE', 'author 4999', '12345']) {
  let maxGap = 0; let last = performance.now(); let on = true; const gaps: number[] = [];
  const tick = () => { const n = performance.now(); maxGap = Math.max(maxGap, n - last); gaps.push(n - last); last = n; if (on) setImmediate(tick); };
  setImmediate(tick);
  const t = performance.now();
  const r = await search(snap, { q, after: 0, limit: 100, abandoned: () => false });
  on = false;
  console.log(q, 'ms', (performance.now() - t).toFixed(0), 'total', r?.total, 'maxGap', maxGap.toFixed(1), gaps.sort((a,b)=>b-a).slice(0,6).map(g=>g.toFixed(0)).join(" "));
}
