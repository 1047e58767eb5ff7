import type { Book, BookPatch } from '../../model/book.ts';
import type { FieldName, Problems } from './book-input.ts';
import type { FeedStatus } from './feed.ts';

/**
 * Everything the page shows, in one place: the controllers (catalogue.ts, book-actions.ts,
 * session.ts) change it, the views render it, and nothing else holds any of it. What a person is
 * typing stays in the inputs until they send it.
 */
export interface ListState {
  /** The search the rows answer (`q`); '' for every book. */
  readonly query: string;
  /**
   * The `after` of each page reached with Next since the list last jumped (a search, a book
   * shown), the current page's last: Previous goes back along it, and past its start asks the
   * service for the page before (keyset.ts).
   */
  readonly trail: readonly number[];
  /** The current page's number counted from the first; undefined when the book shown is too far to count. */
  readonly pageNumber: number | undefined;
  readonly books: readonly Book[];
  /** The next page's `after` (the Link header), undefined on the last page. */
  readonly next: number | undefined;
  /** How many books match (X-Total-Count). */
  readonly total: number;
  readonly highlighted: number | undefined;
  /** Counts the times a book was shown: each one scrolls the highlighted row into view. */
  readonly reveal: number;
  /** Why the list could not be loaded; '' when it was. */
  readonly problem: string;
  /** False until the first answer: nothing is said about the list before. */
  readonly loaded: boolean;
}

export interface FormState {
  readonly problems: Problems;
  /** The service's message when it refused what was sent. */
  readonly error: string;
}

/** A save refused because another one came first; the edit's base is now the version saved meanwhile. */
export interface Conflict {
  /** What saving now would change in it: the person's own changes that differ from it. */
  readonly mine: BookPatch;
  /** Fields of `mine` that the other person had changed too: saving replaces their change. */
  readonly overwrites: readonly FieldName[];
}

export interface EditState extends FormState {
  /** Counts the edits opened: a new one fills the form. */
  readonly session: number;
  /** The version the form started from and its ETag, sent as If-Match. */
  readonly base: Book;
  readonly etag: string;
  readonly conflict: Conflict | undefined;
}

export interface RemovalState {
  /** The version the person is asked about, and its ETag, sent as If-Match. */
  readonly book: Book;
  readonly etag: string;
  /** The book changed since the list showed it (or since the question was asked). */
  readonly changed: boolean;
  readonly error: string;
}

export interface SignInState {
  readonly open: boolean;
  readonly note: string;
  readonly error: string;
}

export interface AppState {
  readonly signedIn: boolean;
  readonly signIn: SignInState;
  /** What is typed in Search (the list's `query` follows it once the search has run). */
  readonly searchText: string;
  readonly list: ListState;
  /** What the person's last action did, said where the list is. */
  readonly notice: string;
  readonly feed: FeedStatus;
  readonly add: FormState;
  readonly edit: EditState | undefined;
  readonly removal: RemovalState | undefined;
}

const NO_PROBLEMS: FormState = { problems: {}, error: '' };

export const INITIAL_STATE: AppState = {
  signedIn: false,
  signIn: { open: false, note: '', error: '' },
  searchText: '',
  list: { query: '', trail: [0], pageNumber: 1, books: [], next: undefined, total: 0, highlighted: undefined, reveal: 0, problem: '', loaded: false },
  notice: '',
  feed: 'off',
  add: NO_PROBLEMS,
  edit: undefined,
  removal: undefined,
};

export type Listener = (state: AppState, previous: AppState) => void;

export interface Store {
  get(): AppState;
  update(change: Partial<AppState>): void;
  updateList(change: Partial<ListState>): void;
  subscribe(listener: Listener): void;
}

export function createStore(initial: AppState = INITIAL_STATE): Store {
  let state = initial;
  const listeners: Listener[] = [];
  const update = (change: Partial<AppState>): void => {
    const previous = state;
    state = { ...state, ...change };
    for (const listener of listeners) listener(state, previous);
  };
  return {
    get: () => state,
    update,
    updateList: (change) => update({ list: { ...state.list, ...change } }),
    subscribe: (listener) => void listeners.push(listener),
  };
}
