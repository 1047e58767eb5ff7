import type { Book, BookStore } from '../../src/index.ts';

/** The book as the library hands it out (`getJson`), parsed; undefined when there is none. */
export function bookIn(store: BookStore, id: number): Book | undefined {
  const json = store.getJson(id);
  return json === undefined ? undefined : (JSON.parse(json) as Book);
}

/** Every book, ascending id, as the library hands them out (`listJson`). */
export function booksIn(store: BookStore): Book[] {
  return JSON.parse(store.listJson()) as Book[];
}
