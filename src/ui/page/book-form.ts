import { call, type Book, type BookFields } from './api.ts';
import { focusEditButton, reload, show } from './book-list.ts';
import { byId, element, say } from './dom.ts';

const addForm = byId('add-form', HTMLFormElement);
const addTitle = byId('add-title', HTMLInputElement);
const addAuthor = byId('add-author', HTMLInputElement);
const addYear = byId('add-year', HTMLInputElement);
const addError = byId('add-error', HTMLElement);
const search = byId('search', HTMLInputElement);
const notice = byId('notice', HTMLElement);

const editDialog = byId('edit-dialog', HTMLDialogElement);
const editForm = byId('edit-form', HTMLFormElement);
const editTitle = byId('edit-title', HTMLInputElement);
const editAuthor = byId('edit-author', HTMLInputElement);
const editYear = byId('edit-year', HTMLInputElement);
const editError = byId('edit-error', HTMLElement);
const editSave = byId('edit-save', HTMLButtonElement);
const conflict = byId('conflict', HTMLElement);
const conflictCurrent = byId('conflict-current', HTMLElement);

const deleteDialog = byId('delete-dialog', HTMLDialogElement);
const deleteQuestion = byId('delete-question', HTMLElement);
const deleteError = byId('delete-error', HTMLElement);

/**
 * The year as typed: a whole number becomes a number; anything else goes as the text it is, so the
 * service's own rule decides and its `Invalid input` is what the person sees.
 */
function fields(title: HTMLInputElement, author: HTMLInputElement, year: HTMLInputElement): Record<keyof BookFields, unknown> {
  const text = year.value.trim();
  return { title: title.value, author: author.value, year: /^-?\d+$/.test(text) ? Number(text) : text };
}

/** The service's match for `q` is a case-insensitive substring; close enough to decide whether to keep the search. */
function matches(book: Book, text: string): boolean {
  const needle = text.toLowerCase();
  return book.title.toLowerCase().includes(needle) || book.author.toLowerCase().includes(needle);
}

addForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void (async () => {
    say(addError, '');
    const answer = await call<Book | null>('POST', 'book', fields(addTitle, addAuthor, addYear));
    if (answer.status !== 201 || answer.data === null) {
      say(addError, answer.message);
      return;
    }
    const book = answer.data;
    addForm.reset();
    if (search.value !== '' && !matches(book, search.value)) search.value = '';
    await show(book.id, search.value);
    say(notice, `Added “${book.title}” (id ${book.id}); it is highlighted in the list.`);
    addTitle.focus();
  })();
});

/** The book being edited and the ETag of the version the person started from. */
let editing: { id: number; etag: string } | undefined;

function fill(book: Book): void {
  editTitle.value = book.title;
  editAuthor.value = book.author;
  editYear.value = String(book.year);
}

function showConflict(current: Book): void {
  conflictCurrent.replaceChildren(
    ...(['title', 'author', 'year'] as const).flatMap((key) => [element('dt', key[0]?.toUpperCase() + key.slice(1)), element('dd', String(current[key]))]),
  );
  conflict.hidden = false;
  editSave.hidden = true;
  byId('conflict-reapply', HTMLButtonElement).focus();
}

function endEdit(): void {
  conflict.hidden = true;
  editSave.hidden = false;
  if (editDialog.open) editDialog.close();
}

/** Escape or Cancel: the dialog gives the focus back to the row's Edit button by itself. */
export async function startEdit(book: Book): Promise<void> {
  const answer = await call<Book | null>('GET', `book/${book.id}`);
  const etag = answer.headers.get('etag');
  if (answer.status !== 200 || answer.data === null || etag === null) {
    say(notice, `${answer.message}: “${book.title}” could not be opened.`);
    await reload();
    return;
  }
  editing = { id: book.id, etag };
  fill(answer.data);
  say(editError, '');
  endEdit();
  editDialog.showModal();
  editTitle.focus();
}

/** PUT with If-Match: on 412 nothing was written, and the person sees the current version and decides. */
async function save(): Promise<void> {
  if (editing === undefined) return;
  const { id, etag } = editing;
  say(editError, '');
  const answer = await call<Book | null>('PUT', `book/${id}`, fields(editTitle, editAuthor, editYear), { 'if-match': etag });
  if (answer.status === 200 && answer.data !== null) {
    const book = answer.data;
    endEdit();
    await show(book.id, search.value);
    say(notice, `Saved “${book.title}”.`);
    focusEditButton(book.id);
    return;
  }
  if (answer.status !== 412) {
    say(editError, answer.message);
    return;
  }
  const current = await call<Book | null>('GET', `book/${id}`);
  const currentEtag = current.headers.get('etag');
  if (current.status !== 200 || current.data === null || currentEtag === null) {
    say(editError, `${current.message}: someone else deleted this book while you were editing.`);
    return;
  }
  editing = { id, etag: currentEtag };
  showConflict(current.data);
}

editForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void save();
});
byId('edit-cancel', HTMLButtonElement).addEventListener('click', endEdit);
byId('conflict-reapply', HTMLButtonElement).addEventListener('click', () => {
  conflict.hidden = true;
  editSave.hidden = false;
  void save();
});
byId('conflict-discard', HTMLButtonElement).addEventListener('click', () => {
  const id = editing?.id;
  endEdit();
  void reload().then(() => id !== undefined && focusEditButton(id));
});

let deleting: Book | undefined;

export function startDelete(book: Book): void {
  deleting = book;
  say(deleteQuestion, `Delete “${book.title}” by ${book.author} (${book.year})? This cannot be undone.`);
  say(deleteError, '');
  deleteDialog.showModal();
  // The safe choice has the focus: Enter right away cancels.
  byId('delete-cancel', HTMLButtonElement).focus();
}

byId('delete-cancel', HTMLButtonElement).addEventListener('click', () => deleteDialog.close());
byId('delete-confirm', HTMLButtonElement).addEventListener('click', () => {
  void (async () => {
    if (deleting === undefined) return;
    const book = deleting;
    const answer = await call('DELETE', `book/${book.id}`);
    if (answer.status !== 200 && answer.status !== 404) {
      say(deleteError, answer.message);
      return;
    }
    deleteDialog.close();
    await reload();
    say(notice, answer.status === 200 ? `Deleted “${book.title}”.` : `“${book.title}” was already deleted.`);
    search.focus();
  })();
});

/** Signing out: no typed text outlives the session. */
export function resetForms(): void {
  addForm.reset();
  say(addError, '');
  say(notice, '');
  endEdit();
  if (deleteDialog.open) deleteDialog.close();
  editing = undefined;
  deleting = undefined;
}
