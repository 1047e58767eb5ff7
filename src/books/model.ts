/** spec §2: a stored book. Responses carry exactly these keys in this order (decisions.md). */
export interface Book {
  readonly id: number;
  readonly title: string;
  readonly author: string;
  readonly year: number;
}

/** The fields a client sends on POST /book (decisions.md, "Books", has their rules). */
export type BookFields = Omit<Book, 'id'>;
/** The fields of PUT /book/{id}: each optional; an absent one keeps its value. */
export type BookPatch = Partial<BookFields>;

/** Serializes with the key order fixed by decisions.md, whatever order the object was built in. */
export function bookJson(book: Book): string {
  return `{"id":${book.id},"title":${JSON.stringify(book.title)},"author":${JSON.stringify(book.author)},"year":${book.year}}`;
}
