import { resolve } from 'node:path';
import { readFileDump, writeFileDump } from '../store/catalogue-dump.ts';
import type { MoveCommand } from './config.ts';
import { loadPostgresStore } from './store-package.ts';

/**
 * Runs `move`: reads the whole catalogue with its position (books, the next id, the feed's seq and
 * last changes) from one store and writes it into the other, which must be empty. The source is
 * left as it was. Resolves with the exit code after one line on stderr.
 */
export async function runMoveCommand(command: MoveCommand, stderr: NodeJS.WritableStream): Promise<number> {
  const dataDir = resolve(command.dataDir);
  try {
    const pg = await loadPostgresStore();
    const database = pg.redactedUrl(command.store.url);
    const toPostgres = command.direction === 'to-postgres';
    const dump = toPostgres ? await readFileDump(dataDir) : await pg.readDump(command.store.url);
    if (toPostgres) await pg.writeDump(command.store.url, dump);
    else await writeFileDump(dataDir, dump);
    const [from, to] = toPostgres ? [dataDir, database] : [database, dataDir];
    const count = dump.books.length;
    stderr.write(`book-catalogue: moved ${count} book${count === 1 ? '' : 's'} from ${from} to ${to} (next id ${dump.nextId}, feed at seq ${dump.seq}); ${from} is unchanged\n`);
    return 0;
  } catch (err) {
    stderr.write(`book-catalogue: move failed: ${(err as Error).message}\n`);
    return 1;
  }
}
