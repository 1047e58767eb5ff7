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

/**
 * The text bookJson writes before each field, whose JSON follows (a string's quotes included), and
 * `}` after the last. Readers of stored text (search, the book index, the snapshot reader) find a
 * book's fields by them: inside a JSON string every `"` is escaped, so none occurs in a title or an author.
 */
export const BOOK_KEYS = { id: '{"id":', title: ',"title":', author: ',"author":', year: ',"year":' } as const;

/** Serializes with the key order fixed by docs/contract.md, "Books", whatever order the object was built in. */
export function bookJson(book: Book): string {
  return `${BOOK_KEYS.id}${book.id}${BOOK_KEYS.title}${JSON.stringify(book.title)}${BOOK_KEYS.author}${JSON.stringify(book.author)}${BOOK_KEYS.year}${book.year}}`;
}
