import { call, type Book } from './api.ts';
import { byId, element, say } from './dom.ts';

/** Never more rows than this at once, so a page of the list stays quick to render; `limit` on GET /books. */
const PAGE_SIZE = 100;
/** Adding a book walks forward page by page to the one that holds it, this far at most. */
const MAX_WALK = 50;

export interface RowActions {
  edit(book: Book): void;
  remove(book: Book): void;
}

const rowsBody = byId('rows', HTMLTableSectionElement);
const summary = byId('summary', HTMLElement);
const pageInfo = byId('page-info', HTMLElement);
const prevButton = byId('prev', HTMLButtonElement);
const nextButton = byId('next', HTMLButtonElement);

/**
 * Keyset pages (GET /books?limit&after[&q]): `cursors[i]` is the `after` of page i, so Previous
 * is exact even while others add and delete, and a deep page costs the service what the first does.
 */
let cursors = [0];
let query = '';
let nextAfter: number | undefined;
let total = 0;
let shown: Book[] = [];
let highlighted: number | undefined;
/** Answers to an older request (typing fast, clicking twice) are dropped. */
let generation = 0;
/**
 * The walk of show() under way. A reload (a live update: the feed's `created` for the very book
 * being shown comes while the walk pages on) waits for it; cutting it short left the list on an
 * earlier page without the book.
 */
let walking: Promise<void> | undefined;
let actions: RowActions | undefined;

export function setRowActions(handlers: RowActions): void {
  actions = handlers;
}

function pageUrl(after: number): string {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE), after: String(after) });
  if (query !== '') params.set('q', query);
  return `books?${params}`;
}

/** RFC 8288 `Link: <…>; rel="next"`: the next page's `after`, when more books follow. */
function nextCursor(link: string | null): number | undefined {
  const match = link === null ? null : /<([^>]*)>\s*;\s*rel="?next"?/.exec(link);
  if (match === null) return undefined;
  const after = new URL(match[1] as string, location.href).searchParams.get('after');
  return after !== null && /^\d+$/.test(after) ? Number(after) : undefined;
}

async function fetchPage(after: number): Promise<{ books: Book[]; next: number | undefined; total: number } | string> {
  const answer = await call<Book[] | null>('GET', pageUrl(after));
  if (answer.status !== 200 || !Array.isArray(answer.data)) return answer.message;
  const count = Number(answer.headers.get('x-total-count'));
  return { books: answer.data, next: nextCursor(answer.headers.get('link')), total: Number.isSafeInteger(count) ? count : answer.data.length };
}

/** Loads the page at the top of `cursors`; false when an error was shown instead. */
async function load(): Promise<boolean> {
  const mine = ++generation;
  const page = await fetchPage(cursors[cursors.length - 1] as number);
  if (mine !== generation) return false;
  if (typeof page === 'string') {
    say(summary, page);
    return false;
  }
  shown = page.books;
  nextAfter = page.next;
  total = page.total;
  if (shown.length === 0 && cursors.length > 1) {
    // The page emptied (its books were deleted): show the one before it.
    cursors.pop();
    return load();
  }
  render();
  return true;
}

/** Rows already on screen, by what they show: a reload that changes nothing touches no element. */
let rendered = new Map<string, HTMLTableRowElement>();

function rowKey(book: Book): string {
  return JSON.stringify([book.id, book.title, book.author, book.year, book.id === highlighted]);
}

/**
 * Reuses the row of every book that did not change and moves nothing that stays in place, so a
 * reload (a live update, a save) never pulls a button away from under a click or the focus.
 */
function syncRows(): void {
  const next = new Map<string, HTMLTableRowElement>();
  const rows = shown.map((book) => {
    const key = rowKey(book);
    const tr = rendered.get(key) ?? row(book);
    next.set(key, tr);
    return tr;
  });
  rows.forEach((tr, i) => {
    const here = rowsBody.children[i];
    if (here !== tr) rowsBody.insertBefore(tr, here ?? null);
  });
  while (rowsBody.children.length > rows.length) rowsBody.lastElementChild?.remove();
  rendered = next;
}

function render(): void {
  syncRows();
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const page = cursors.length;
  say(pageInfo, `Page ${page} of ${Math.max(page, pages)}`);
  const found = query === '' ? `${total} ${total === 1 ? 'book' : 'books'}` : `${total} ${total === 1 ? 'book matches' : 'books match'} “${query}”`;
  const first = shown[0];
  const last = shown[shown.length - 1];
  say(summary, first === undefined || last === undefined ? `${found}.` : `${found}; showing ids ${first.id}–${last.id}.`);
  prevButton.disabled = cursors.length === 1;
  nextButton.disabled = nextAfter === undefined;
}

function row(book: Book): HTMLTableRowElement {
  const tr = element('tr');
  tr.dataset.id = String(book.id);
  const titleCell = element('td', book.title);
  titleCell.id = `title-${book.id}`;
  titleCell.dataset.label = 'Title';
  const cells = [element('td', String(book.id)), titleCell, element('td', book.author), element('td', String(book.year))];
  cells[0]?.setAttribute('data-label', 'Id');
  cells[2]?.setAttribute('data-label', 'Author');
  cells[3]?.setAttribute('data-label', 'Year');
  const buttons = element('td', '', 'actions');
  const edit = element('button', 'Edit', 'secondary');
  const remove = element('button', 'Delete', 'secondary');
  for (const button of [edit, remove]) {
    button.type = 'button';
    // The name stays "Edit"/"Delete"; the title is read as its description.
    button.setAttribute('aria-describedby', titleCell.id);
  }
  edit.addEventListener('click', () => actions?.edit(book));
  remove.addEventListener('click', () => actions?.remove(book));
  buttons.append(edit, remove);
  tr.append(...cells, buttons);
  if (book.id === highlighted) {
    tr.className = 'highlight';
    tr.setAttribute('aria-current', 'true');
  }
  return tr;
}

/** From the first page, with `text` as the search (empty: every book). */
export function search(text: string): Promise<boolean> {
  query = text;
  cursors = [0];
  highlighted = undefined;
  return load();
}

export async function reload(): Promise<boolean> {
  while (walking !== undefined) await walking;
  return load();
}

export async function next(): Promise<void> {
  if (nextAfter === undefined) return;
  cursors.push(nextAfter);
  highlighted = undefined;
  await load();
}

export async function previous(): Promise<void> {
  if (cursors.length === 1) return;
  cursors.pop();
  highlighted = undefined;
  await load();
}

/**
 * Moves to the page that holds book `id` and highlights it: forward along the pages (a new book
 * has the largest id, so it is on the last one), at most MAX_WALK pages; further than that, to a
 * page that starts with it, whose Previous leads back to the first page.
 */
export function show(id: number, searchText: string): Promise<void> {
  const walk = walkTo(id, searchText).finally(() => {
    if (walking === walk) walking = undefined;
  });
  walking = walk;
  return walk;
}

async function walkTo(id: number, searchText: string): Promise<void> {
  query = searchText;
  if (cursors.length > 1 && (cursors[cursors.length - 1] as number) >= id) cursors = [0];
  highlighted = id;
  for (let hop = 0; hop < MAX_WALK; hop++) {
    if (!(await load())) return;
    if (shown.some((book) => book.id === id) || nextAfter === undefined || (shown[shown.length - 1]?.id ?? 0) > id) break;
    cursors.push(nextAfter);
  }
  if (!shown.some((book) => book.id === id)) {
    cursors = [0, id - 1];
    await load();
  }
  rowsBody.querySelector('tr.highlight')?.scrollIntoView({ block: 'nearest' });
}

/** Forgets every book shown (signing out). */
export function clear(): void {
  generation++;
  shown = [];
  cursors = [0];
  query = '';
  rendered = new Map();
  rowsBody.replaceChildren();
  say(summary, '');
  say(pageInfo, '');
}

/** After an edit ends, the focus goes back to where it started: the book's Edit button. */
export function focusEditButton(id: number): void {
  rowsBody.querySelector<HTMLButtonElement>(`tr[data-id="${id}"] button`)?.focus();
}
