import type { Book } from '../../model/book.ts';
import { element, say } from './dom.ts';
import { pageCount } from './keyset.ts';
import type { AppState, ListState } from './state.ts';

export interface ListElements {
  readonly rows: HTMLTableSectionElement;
  readonly summary: HTMLElement;
  readonly pageInfo: HTMLElement;
  readonly previous: HTMLButtonElement;
  readonly next: HTMLButtonElement;
}

export interface ListHandlers {
  edit(book: Book): void;
  remove(book: Book): void;
  previous(): void;
  next(): void;
}

export interface ListView {
  render(state: AppState, previous: AppState): void;
  /** After an edit ends, the focus goes back to where it started: the book's Edit button. */
  focusEdit(id: number): void;
}

/** Counts as the reader's locale writes them: 16,666 books (16.666 in German, 16 666 in French). */
const counts = new Intl.NumberFormat();
const count = (n: number): string => counts.format(n);

function summaryText(list: ListState): string {
  if (!list.loaded || list.problem !== '') return list.problem;
  const { total, query, books } = list;
  const found = query === '' ? `${count(total)} ${total === 1 ? 'book' : 'books'}` : `${count(total)} ${total === 1 ? 'book matches' : 'books match'} “${query}”`;
  const first = books[0];
  const last = books[books.length - 1];
  return first === undefined || last === undefined ? `${found}.` : `${found}; showing ids ${first.id}–${last.id}.`;
}

function pageText(list: ListState): string {
  const pages = pageCount(list.total);
  if (list.pageNumber === undefined) return `${count(pages)} ${pages === 1 ? 'page' : 'pages'}`;
  return `Page ${count(list.pageNumber)} of ${count(Math.max(list.pageNumber, pages))}`;
}

/** The rows, the count and the pager: rendered from the list's state, never holding any of it. */
export function createListView(elements: ListElements, handlers: ListHandlers): ListView {
  const { rows, summary, pageInfo, previous, next } = elements;
  previous.addEventListener('click', () => handlers.previous());
  next.addEventListener('click', () => handlers.next());

  function row(book: Book, highlighted: boolean): HTMLTableRowElement {
    const tr = element('tr');
    tr.dataset.id = String(book.id);
    const titleCell = element('td', book.title);
    titleCell.id = `title-${book.id}`;
    const cells = [element('td', String(book.id)), titleCell, element('td', book.author), element('td', String(book.year))];
    ['Id', 'Title', 'Author', 'Year'].forEach((label, i) => cells[i]?.setAttribute('data-label', label));
    const buttons = element('td', '', 'actions');
    const edit = element('button', 'Edit', 'secondary');
    const remove = element('button', 'Delete', 'secondary');
    for (const button of [edit, remove]) {
      button.type = 'button';
      // The name stays "Edit"/"Delete"; the title is read as its description.
      button.setAttribute('aria-describedby', titleCell.id);
    }
    edit.addEventListener('click', () => handlers.edit(book));
    remove.addEventListener('click', () => handlers.remove(book));
    buttons.append(edit, remove);
    tr.append(...cells, buttons);
    if (highlighted) {
      tr.className = 'highlight';
      tr.setAttribute('aria-current', 'true');
    }
    return tr;
  }

  /** Rows already on screen, by what they show: a reload that changes nothing touches no element. */
  let rendered = new Map<string, HTMLTableRowElement>();

  /**
   * Reuses the row of every book that did not change and moves nothing that stays in place, so a
   * reload (a live update, a save) never pulls a button away from under a click or the focus.
   */
  function syncRows(list: ListState): void {
    const kept = new Map<string, HTMLTableRowElement>();
    const wanted = list.books.map((book) => {
      const key = JSON.stringify([book.id, book.title, book.author, book.year, book.id === list.highlighted]);
      const tr = rendered.get(key) ?? row(book, book.id === list.highlighted);
      kept.set(key, tr);
      return tr;
    });
    wanted.forEach((tr, i) => {
      const here = rows.children[i];
      if (here !== tr) rows.insertBefore(tr, here ?? null);
    });
    while (rows.children.length > wanted.length) rows.lastElementChild?.remove();
    rendered = kept;
  }

  return {
    render(state, before) {
      const list = state.list;
      if (!state.signedIn) {
        rendered = new Map();
        rows.replaceChildren();
        say(summary, '');
        say(pageInfo, '');
        return;
      }
      if (list === before.list && before.signedIn) return;
      syncRows(list);
      say(summary, summaryText(list));
      say(pageInfo, pageText(list));
      previous.disabled = list.trail[list.trail.length - 1] === 0;
      next.disabled = list.next === undefined;
      if (list.reveal !== before.list.reveal) rows.querySelector('tr.highlight')?.scrollIntoView({ block: 'center' });
    },
    focusEdit(id) {
      rows.querySelector<HTMLButtonElement>(`tr[data-id="${id}"] button`)?.focus();
    },
  };
}
