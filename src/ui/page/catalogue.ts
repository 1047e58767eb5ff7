import type { Book } from '../../model/book.ts';
import type { Api } from './api.ts';
import { cursorBefore, locate, nextCursor, PAGE_SIZE, type FetchPage } from './keyset.ts';
import type { ListState, Store } from './state.ts';

/** What the list shows, and how it moves: the list's controller. No DOM. */
export interface Catalogue {
  /** The first page of `text` (empty: every book). */
  search(text: string): Promise<void>;
  next(): Promise<void>;
  previous(): Promise<void>;
  /** The page shown, again (a change made elsewhere). Waits for a move under way, then runs. */
  reload(): Promise<void>;
  /**
   * Goes to the page that holds book `id` and highlights it; when the search hides it, the search
   * is cleared first. True once it is shown highlighted; false when it is gone, or the person
   * moved on meanwhile.
   */
  show(id: number): Promise<boolean>;
  /** Forgets every book shown (signing out). */
  forget(): void;
}

/** The service did not answer a page: its message is shown where the count goes. */
class ListProblem extends Error {}

export function createCatalogue(api: Api, store: Store): Catalogue {
  /** Counts the moves begun: an answer to an older one is dropped. */
  let generation = 0;
  let running: AbortController | undefined;
  let moving = false;
  let reloadWanted = false;
  const list = (): ListState => store.get().list;

  function pages(query: string, signal: AbortSignal): FetchPage {
    return async (after, limit) => {
      const params = new URLSearchParams({ limit: String(limit), after: String(after) });
      if (query !== '') params.set('q', query);
      const answer = await api.call<Book[] | null>('GET', `books?${params}`, { signal });
      if (answer.status !== 200 || !Array.isArray(answer.data)) throw new ListProblem(answer.message);
      const total = Number(answer.headers.get('x-total-count'));
      return { books: answer.data, next: nextCursor(answer.headers.get('link'), location.href), total: Number.isSafeInteger(total) ? total : answer.data.length };
    };
  }

  /**
   * One change of what the list shows. The newest wins: one still under way is aborted and
   * whatever it gets back is dropped, so typing fast or clicking twice never shows an older
   * answer. A reload never interrupts a move (a search, paging, going to a book): it would put
   * back the page being left; it waits for the move, then shows the page the move reached.
   */
  async function run(kind: 'move' | 'reload', work: (signal: AbortSignal) => Promise<Partial<ListState>>): Promise<boolean> {
    if (kind === 'reload' && moving) {
      reloadWanted = true;
      return false;
    }
    running?.abort();
    const controller = new AbortController();
    running = controller;
    const mine = ++generation;
    moving = kind === 'move';
    let change: Partial<ListState>;
    try {
      change = { problem: '', loaded: true, ...(await work(controller.signal)) };
    } catch (err) {
      if (!(err instanceof ListProblem)) throw err;
      change = { problem: err.message, loaded: true };
    } finally {
      if (mine === generation) {
        running = undefined;
        moving = false;
      }
    }
    if (mine !== generation) return false;
    store.updateList(change);
    if (reloadWanted) {
      reloadWanted = false;
      void reload();
    }
    return change.problem === '';
  }

  /** The page before the one starting at `here`: back along the trail, or looked up (keyset.ts). */
  async function pageBefore(state: ListState, signal: AbortSignal): Promise<Partial<ListState>> {
    const { trail, pageNumber, query } = state;
    const fetchPage = pages(query, signal);
    const after = trail.length > 1 ? (trail[trail.length - 2] as number) : ((await cursorBefore(fetchPage, trail[0] as number, PAGE_SIZE)) ?? 0);
    const number = after === 0 ? 1 : pageNumber === undefined ? undefined : pageNumber - 1;
    return { trail: trail.length > 1 ? trail.slice(0, -1) : [after], pageNumber: number, ...(await fetchPage(after, PAGE_SIZE)) };
  }

  const here = (state: ListState): number => state.trail[state.trail.length - 1] as number;

  function search(text: string): Promise<void> {
    return run('move', async (signal) => ({ query: text, trail: [0], pageNumber: 1, highlighted: undefined, ...(await pages(text, signal)(0, PAGE_SIZE)) })).then(() => undefined);
  }

  function next(): Promise<void> {
    const { next: after, trail, pageNumber, query } = list();
    if (after === undefined) return Promise.resolve();
    return run('move', async (signal) => ({
      trail: [...trail, after],
      pageNumber: pageNumber === undefined ? undefined : pageNumber + 1,
      highlighted: undefined,
      ...(await pages(query, signal)(after, PAGE_SIZE)),
    })).then(() => undefined);
  }

  function previous(): Promise<void> {
    const state = list();
    if (here(state) === 0) return Promise.resolve();
    return run('move', async (signal) => ({ highlighted: undefined, ...(await pageBefore(state, signal)) })).then(() => undefined);
  }

  function reload(): Promise<void> {
    return run('reload', async (signal) => {
      const state = list();
      const page = await pages(state.query, signal)(here(state), PAGE_SIZE);
      // The page emptied (its books were deleted): show the one before it.
      return page.books.length === 0 && here(state) !== 0 ? pageBefore(state, signal) : page;
    }).then(() => undefined);
  }

  async function show(id: number): Promise<boolean> {
    let cleared = false;
    const done = await run('move', async (signal) => {
      const state = list();
      const landed = { highlighted: id, reveal: state.reveal + 1 };
      if (state.books.some((book) => book.id === id)) {
        const page = await pages(state.query, signal)(here(state), PAGE_SIZE);
        if (page.books.some((book) => book.id === id)) return { ...page, ...landed };
      }
      for (const query of state.query === '' ? [''] : [state.query, '']) {
        const fetchPage = pages(query, signal);
        const at = await locate(fetchPage, id);
        if (at === undefined) continue;
        cleared = query !== state.query;
        return { query, trail: [at.after], pageNumber: at.pageNumber, ...(await fetchPage(at.after, PAGE_SIZE)), ...landed };
      }
      return { highlighted: undefined, ...(await pages(state.query, signal)(here(state), PAGE_SIZE)) };
    });
    if (done && cleared) store.update({ searchText: '' });
    return done && list().highlighted === id;
  }

  function forget(): void {
    generation++;
    running?.abort();
    running = undefined;
    moving = false;
    reloadWanted = false;
  }

  return { search, next, previous, reload, show, forget };
}
