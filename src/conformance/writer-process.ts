/**
 * The child process of the conformance suite's process-loss test: opens the catalogue its opener
 * names (argv: module, arg), then creates books eight at a time, printing each acknowledged id on a
 * line, until it is killed. Importing it from anywhere else does nothing.
 */
import { argv, stdout } from 'node:process';
import type { DurableBookStore } from '../store/book-store.ts';

const [module, arg] = argv.slice(2);

async function write(store: DurableBookStore): Promise<never> {
  for (let n = 0; ; n += 8) {
    const created = await Promise.all(Array.from({ length: 8 }, (_, i) => store.create({ title: `lost-process ${n + i}`, author: 'writer', year: 2000 })));
    stdout.write(created.map((c) => `${c.id} ${c.title}\n`).join(''));
  }
}

if (module !== undefined && arg !== undefined) {
  const open = ((await import(module)) as { default: (arg: string) => Promise<DurableBookStore> }).default;
  await write(await open(arg));
}
