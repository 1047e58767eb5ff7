import type { Book, BookStore } from '../../src/index.ts';

/** The book as the library hands it out (`getJson`), parsed; undefined when there is none. */
export function bookIn(store: BookStore, id: number): Book | undefined {
  const json = store.getJson(id);
  return json === undefined ? undefined : (JSON.parse(json) as Book);
}

/**
 * Every book's JSON, ascending id, as one array text: from `booksAfter`, which a store and its index
 * both have, so a test can compare whole states without the library keeping a method for it.
 */
export function listJsonOf(source: Pick<BookStore, 'booksAfter'>): string {
  return `[${source.booksAfter(0, Infinity).books.join(',')}]`;
}

/** Every book, ascending id, as the library hands them out. */
export function booksIn(store: Pick<BookStore, 'booksAfter'>): Book[] {
  return JSON.parse(listJsonOf(store)) as Book[];
}
