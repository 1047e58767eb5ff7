/** A stored book. Responses carry exactly these keys in this order (docs/contract.md, "Books"). */
export interface Book {
  readonly id: number;
  readonly title: string;
  readonly author: string;
  readonly year: number;
}

/** The fields a client sends on POST /book (docs/contract.md, "Books", has their rules). */
export type BookFields = Omit<Book, 'id'>;
/** The fields of PUT /book/{id}: each optional; an absent one keeps its value. */
export type BookPatch = Partial<BookFields>;

/** Serializes with the key order fixed by docs/contract.md, "Books", whatever order the object was built in. */
export function bookJson(book: Book): string {
  return `{"id":${book.id},"title":${JSON.stringify(book.title)},"author":${JSON.stringify(book.author)},"year":${book.year}}`;
}
