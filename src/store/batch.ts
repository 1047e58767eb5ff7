import { bookJson, type Book, type BookFields, type BookPatch } from '../books/model.ts';
import { encodeDelete, encodePut } from './journal.ts';

export type Op = { kind: 'create'; fields: BookFields } | { kind: 'update'; id: number; patch: BookPatch } | { kind: 'delete'; id: number };
export type Result = Book | boolean | undefined;

/** What a batch does, decided before anything is written; memory changes only after the fsync. */
export interface BatchPlan {
  /** id → the book's new JSON, or null when deleted. */
  changes: Map<number, string | null>;
  /** One per op, in order: the book (create, update), undefined (no such book), found (delete). */
  results: Result[];
  /** The journal records to append ('' when nothing changes). */
  text: string;
  nextId: number;
  seq: number;
}

/**
 * Decides every op of a batch in order against committed state (`committed`) plus the ops
 * before it in the same batch, numbering records from `seq` + 1 and new ids from `nextId`.
 */
export function planBatch(ops: readonly Op[], committed: (id: number) => string | undefined, nextId: number, seq: number): BatchPlan {
  const plan: BatchPlan = { changes: new Map(), results: [], text: '', nextId, seq };
  const current = (id: number): string | undefined => {
    const changed = plan.changes.get(id);
    return changed === null ? undefined : (changed ?? committed(id));
  };
  for (const op of ops) {
    if (op.kind === 'delete') {
      const found = current(op.id) !== undefined;
      if (found) {
        plan.changes.set(op.id, null);
        plan.text += encodeDelete(++plan.seq, op.id);
      }
      plan.results.push(found);
      continue;
    }
    const book = op.kind === 'create' ? created(plan.nextId++, op.fields) : patched(current(op.id), op.patch);
    if (book === undefined) {
      plan.results.push(undefined);
      continue;
    }
    const json = bookJson(book);
    plan.changes.set(book.id, json);
    plan.text += encodePut(++plan.seq, json);
    plan.results.push(book);
  }
  return plan;
}

function created(id: number, f: BookFields): Book {
  return { id, title: f.title, author: f.author, year: f.year };
}

function patched(json: string | undefined, patch: BookPatch): Book | undefined {
  if (json === undefined) return undefined;
  const prev = JSON.parse(json) as Book;
  return { id: prev.id, title: patch.title ?? prev.title, author: patch.author ?? prev.author, year: patch.year ?? prev.year };
}
