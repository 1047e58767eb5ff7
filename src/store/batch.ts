import { BookIdsExhaustedError, PreconditionFailedError } from '../faults.ts';
import { bookJson, type Book, type BookFields, type BookPatch } from '../model/book.ts';
import { MAX_BOOK_ID } from '../model/valid-book.ts';
import type { VersionCondition } from './book-store.ts';
import type { ChangeEntry } from './change.ts';

/** `condition`: what the book's current version must meet when the op is decided. */
export type Op =
  | { kind: 'create'; fields: BookFields }
  | { kind: 'update'; id: number; patch: BookPatch; condition: VersionCondition | undefined }
  | { kind: 'delete'; id: number; condition: VersionCondition | undefined };
/** An op whose condition did not hold: it changes nothing. */
export const PRECONDITION_FAILED = Symbol('precondition failed');
/** A create after the id MAX_BOOK_ID was given: it changes nothing. */
export const NO_ID_LEFT = Symbol('no id left');
export type Result = Book | boolean | undefined | typeof PRECONDITION_FAILED | typeof NO_ID_LEFT;

/** What an op's caller gets: the book, undefined or found, or the fault an op that changed nothing is refused with. */
export function outcomeOf(result: Result): Book | boolean | undefined {
  if (result === PRECONDITION_FAILED) throw new PreconditionFailedError();
  if (result === NO_ID_LEFT) throw new BookIdsExhaustedError();
  return result;
}

/** What a batch does, decided before anything is written; memory changes only after the fsync. */
export interface BatchPlan {
  /** id → the book's new JSON, or null when deleted. */
  changes: Map<number, string | null>;
  /** One per op, in order: the book (create, update), undefined (no such book), found (delete), PRECONDITION_FAILED or NO_ID_LEFT. */
  results: Result[];
  /** The changes to make durable, in seq order (none when nothing changes): what the change feed publishes once they are. */
  entries: ChangeEntry[];
  /** The id the next create gets; MAX_BOOK_ID + 1 once every id is given. */
  nextId: number;
  seq: number;
}

/**
 * Decides every op of a batch in order against committed state (`committed`) plus the ops
 * before it in the same batch, numbering records from `seq` + 1 and new ids from `nextId`. A
 * condition is checked here, against exactly the state the op replaces: no earlier write can slip
 * in between the check and the write, and none is still pending unseen (a missing book is
 * undefined first, as 404 comes before 412).
 */
export function planBatch(ops: readonly Op[], committed: (id: number) => string | undefined, nextId: number, seq: number): BatchPlan {
  const plan: BatchPlan = { changes: new Map(), results: [], entries: [], nextId, seq };
  const current = (id: number): string | undefined => {
    const changed = plan.changes.get(id);
    return changed === null ? undefined : (changed ?? committed(id));
  };
  for (const op of ops) {
    const before = op.kind === 'create' ? undefined : current(op.id);
    if (op.kind !== 'create' && before !== undefined && op.condition !== undefined && !op.condition(before)) {
      plan.results.push(PRECONDITION_FAILED);
      continue;
    }
    if (op.kind === 'delete') {
      const found = before !== undefined;
      if (found) {
        plan.changes.set(op.id, null);
        plan.entries.push({ seq: ++plan.seq, type: 'deleted', id: op.id, bookJson: null });
      }
      plan.results.push(found);
      continue;
    }
    if (op.kind === 'create' && plan.nextId > MAX_BOOK_ID) {
      plan.results.push(NO_ID_LEFT);
      continue;
    }
    const book = op.kind === 'create' ? created(plan.nextId++, op.fields) : patched(before, op.patch);
    if (book === undefined) {
      plan.results.push(undefined);
      continue;
    }
    const json = bookJson(book);
    // An update that leaves the book as it is writes nothing and publishes no change (docs/contract.md, "Books").
    if (json === before) {
      plan.results.push(book);
      continue;
    }
    plan.changes.set(book.id, json);
    plan.entries.push({ seq: ++plan.seq, type: op.kind === 'create' ? 'created' : 'updated', id: book.id, bookJson: json });
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
