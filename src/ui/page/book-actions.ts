import type { Book } from '../../model/book.ts';
import type { Api } from './api.ts';
import { changedFields, changedNames, readBook, type Typed } from './book-input.ts';
import type { Catalogue } from './catalogue.ts';
import type { Store } from './state.ts';

/**
 * Adding, editing and deleting a book: the requests, and what the page then shows. No DOM: the
 * views hand in what was typed and get back how it went (to move the focus).
 */
export interface BookActions {
  /** 'added' as soon as the service stored it; the list then goes to it. */
  add(typed: Typed): Promise<'invalid' | 'refused' | 'added'>;
  openEdit(book: Book): Promise<void>;
  /** Sends only the fields the person changed, with If-Match of the version the form started from. */
  save(typed: Typed): Promise<'invalid' | 'refused' | 'conflict' | 'saved'>;
  closeEdit(): void;
  openDelete(book: Book): Promise<void>;
  confirmDelete(): Promise<void>;
  closeDelete(): void;
}

const sameBook = (a: Book, b: Book): boolean => changedNames(changedFields(a, b)).length === 0;

export function createBookActions(api: Api, store: Store, catalogue: Catalogue): BookActions {
  let sessions = 0;
  const say = (notice: string): void => store.update({ notice });

  /** The book now, with its ETag; a message instead when it cannot be read (deleted: 404). */
  async function current(id: number): Promise<{ book: Book; etag: string } | { status: number; message: string }> {
    const answer = await api.call<Book | null>('GET', `book/${id}`);
    const etag = answer.headers.get('etag');
    if (answer.status !== 200 || answer.data === null || etag === null) return { status: answer.status, message: answer.message };
    return { book: answer.data, etag };
  }

  async function showAndSay(book: Book, done: string): Promise<void> {
    const shown = await catalogue.show(book.id);
    const page = store.get().list.pageNumber;
    say(shown ? `${done}; it is highlighted${page === undefined ? '' : ` on page ${page}`}.` : `${done}.`);
  }

  async function add(typed: Typed): Promise<'invalid' | 'refused' | 'added'> {
    const reading = readBook(typed);
    if ('problems' in reading) {
      store.update({ add: { problems: reading.problems, error: '' } });
      return 'invalid';
    }
    store.update({ add: { problems: {}, error: '' } });
    const answer = await api.call<Book | null>('POST', 'book', { body: reading.fields });
    if (answer.status !== 201 || answer.data === null) {
      store.update({ add: { problems: {}, error: answer.message } });
      return 'refused';
    }
    const book = answer.data;
    void showAndSay(book, `Added “${book.title}” (id ${book.id})`);
    return 'added';
  }

  async function openEdit(book: Book): Promise<void> {
    const now = await current(book.id);
    if (!('book' in now)) {
      say(`${now.message}: “${book.title}” could not be opened.`);
      await catalogue.reload();
      return;
    }
    store.update({ edit: { session: ++sessions, base: now.book, etag: now.etag, conflict: undefined, problems: {}, error: '' } });
  }

  async function save(typed: Typed): Promise<'invalid' | 'refused' | 'conflict' | 'saved'> {
    const edit = store.get().edit;
    if (edit === undefined) return 'refused';
    const reading = readBook(typed);
    if ('problems' in reading) {
      store.update({ edit: { ...edit, problems: reading.problems, error: '' } });
      return 'invalid';
    }
    const patch = changedFields(edit.base, reading.fields);
    if (changedNames(patch).length === 0) {
      store.update({ edit: undefined });
      say(`Nothing changed in “${edit.base.title}”.`);
      return 'saved';
    }
    store.update({ edit: { ...edit, problems: {}, error: '' } });
    const answer = await api.call<Book | null>('PUT', `book/${edit.base.id}`, { body: patch, headers: { 'if-match': edit.etag } });
    if (answer.status === 200 && answer.data !== null) {
      store.update({ edit: undefined });
      await showAndSay(answer.data, `Saved “${answer.data.title}”`);
      return 'saved';
    }
    if (answer.status !== 412) {
      store.update({ edit: { ...edit, error: answer.message } });
      return 'refused';
    }
    // Nothing was written. The form now starts from the version saved meanwhile, keeping only what
    // this person changed, and they see what saving would do to it before deciding.
    const now = await current(edit.base.id);
    if (!('book' in now)) {
      store.update({ edit: { ...edit, error: `${now.message}: someone else deleted this book while you were editing.` } });
      return 'refused';
    }
    const mine = changedFields(now.book, { ...now.book, ...patch });
    const overwrites = changedNames(mine).filter((field) => now.book[field] !== edit.base[field]);
    store.update({ edit: { ...edit, base: now.book, etag: now.etag, conflict: { mine, overwrites }, problems: {}, error: '' } });
    return 'conflict';
  }

  function closeEdit(): void {
    if (store.get().edit !== undefined) store.update({ edit: undefined });
  }

  async function openDelete(book: Book): Promise<void> {
    const now = await current(book.id);
    if (!('book' in now)) {
      say(now.status === 404 ? `“${book.title}” was already deleted.` : `${now.message}: “${book.title}” could not be opened.`);
      await catalogue.reload();
      return;
    }
    store.update({ removal: { book: now.book, etag: now.etag, changed: !sameBook(book, now.book), error: '' } });
  }

  /** DELETE with If-Match of the version the person was asked about: a change made meanwhile is shown, not deleted. */
  async function confirmDelete(): Promise<void> {
    const removal = store.get().removal;
    if (removal === undefined) return;
    const { book, etag } = removal;
    const answer = await api.call('DELETE', `book/${book.id}`, { headers: { 'if-match': etag } });
    if (answer.status === 412) {
      const now = await current(book.id);
      if ('book' in now) {
        store.update({ removal: { book: now.book, etag: now.etag, changed: true, error: '' } });
        return;
      }
    } else if (answer.status !== 200 && answer.status !== 404) {
      store.update({ removal: { ...removal, error: answer.message } });
      return;
    }
    store.update({ removal: undefined });
    say(answer.status === 200 ? `Deleted “${book.title}”.` : `“${book.title}” was already deleted.`);
    await catalogue.reload();
  }

  function closeDelete(): void {
    if (store.get().removal !== undefined) store.update({ removal: undefined });
  }

  return { add, openEdit, save, closeEdit, openDelete, confirmDelete, closeDelete };
}
