import { createAddForm } from './add-form.ts';
import { createApi } from './api.ts';
import { createBookActions } from './book-actions.ts';
import { createCatalogue } from './catalogue.ts';
import { createDeleteDialog } from './delete-dialog.ts';
import { byId } from './dom.ts';
import { createEditDialog } from './edit-dialog.ts';
import { follow, stop, wake } from './feed.ts';
import type { BookInputs } from './fields-view.ts';
import { createListView } from './list-view.ts';
import { createSearchView } from './search-view.ts';
import { createSession } from './session.ts';
import { createSignInDialog } from './signin-dialog.ts';
import { createStore, INITIAL_STATE, type AppState } from './state.ts';
import { createStatusView } from './status-view.ts';

/**
 * The one place that wires the page: the state (state.ts), the controllers that change it
 * (session, catalogue, book actions), and the views that render it, each handed its elements.
 * No other module looks an element up or runs anything when it is imported.
 */

/** Changes from the feed arrive in bursts; the page is reloaded once per burst. */
const LIVE_DEBOUNCE_MS = 150;
/** Feed events that change books (`expired` says the stream ends; the feed then reports its status). */
const CHANGES = new Set(['created', 'updated', 'deleted', 'reset']);
const EXPIRED = 'Your session has expired. Sign in again to continue; nothing you typed is lost.';

const store = createStore();
const api = createApi(() => session.ask(store.get().signedIn ? EXPIRED : store.get().signIn.note));
const session = createSession(api, store, wake);
const catalogue = createCatalogue(api, store);
const actions = createBookActions(api, store, catalogue);

const bookInputs = (form: 'add' | 'edit'): BookInputs => {
  const pair = (field: string): { input: HTMLInputElement; problem: HTMLElement } => ({
    input: byId(`${form}-${field}`, HTMLInputElement),
    problem: byId(`${form}-${field}-problem`, HTMLElement),
  });
  return { title: pair('title'), author: pair('author'), year: pair('year') };
};

const searchView = createSearchView(byId('search', HTMLInputElement), {
  typed: (searchText) => store.update({ searchText }),
  search: (text) => void catalogue.search(text),
});
const listView = createListView(
  {
    rows: byId('rows', HTMLTableSectionElement),
    summary: byId('summary', HTMLElement),
    pageInfo: byId('page-info', HTMLElement),
    previous: byId('prev', HTMLButtonElement),
    next: byId('next', HTMLButtonElement),
  },
  {
    edit: (book) => void actions.openEdit(book),
    remove: (book) => void actions.openDelete(book),
    previous: () => void catalogue.previous(),
    next: () => void catalogue.next(),
  },
);
const addForm = createAddForm({ form: byId('add-form', HTMLFormElement), inputs: bookInputs('add'), error: byId('add-error', HTMLElement) }, { add: actions.add });
const editDialog = createEditDialog(
  {
    dialog: byId('edit-dialog', HTMLDialogElement),
    form: byId('edit-form', HTMLFormElement),
    inputs: bookInputs('edit'),
    error: byId('edit-error', HTMLElement),
    save: byId('edit-save', HTMLButtonElement),
    cancel: byId('edit-cancel', HTMLButtonElement),
    conflict: {
      panel: byId('conflict', HTMLElement),
      current: byId('conflict-current', HTMLElement),
      plan: byId('conflict-plan', HTMLElement),
      changes: byId('conflict-changes', HTMLElement),
      reapply: byId('conflict-reapply', HTMLButtonElement),
      discard: byId('conflict-discard', HTMLButtonElement),
    },
  },
  {
    save: actions.save,
    close: actions.closeEdit,
    discard: () => {
      const id = store.get().edit?.base.id;
      actions.closeEdit();
      void catalogue.reload().then(() => id !== undefined && listView.focusEdit(id));
    },
    saved: (id) => listView.focusEdit(id),
  },
);
const deleteDialog = createDeleteDialog(
  {
    dialog: byId('delete-dialog', HTMLDialogElement),
    question: byId('delete-question', HTMLElement),
    error: byId('delete-error', HTMLElement),
    confirm: byId('delete-confirm', HTMLButtonElement),
    cancel: byId('delete-cancel', HTMLButtonElement),
  },
  {
    confirm: () => void actions.confirmDelete().then(() => store.get().removal === undefined && searchView.focus()),
    close: actions.closeDelete,
  },
);
const signInDialog = createSignInDialog(
  {
    dialog: byId('signin-dialog', HTMLDialogElement),
    form: byId('signin-form', HTMLFormElement),
    username: byId('username', HTMLInputElement),
    password: byId('password', HTMLInputElement),
    note: byId('signin-note', HTMLElement),
    error: byId('signin-error', HTMLElement),
  },
  { submit: session.submit },
);
/** Resume: a feed the service stopped accepting needs a new sign-in; an interrupted one reconnects now. */
const statusView = createStatusView({ notice: byId('notice', HTMLElement), feed: byId('feed-status', HTMLElement), resume: byId('feed-resume', HTMLButtonElement) }, () => {
  if (store.get().feed === 'stopped') void session.ask('Sign in again to resume live updates.');
  else wake();
});

const catalogueSection = byId('catalogue', HTMLElement);
const signOutButton = byId('sign-out', HTMLButtonElement);
const shell = {
  render(state: AppState): void {
    catalogueSection.hidden = !state.signedIn;
    signOutButton.hidden = !state.signedIn;
  },
};

const views = [shell, signInDialog, searchView, listView, addForm, editDialog, deleteDialog, statusView];
store.subscribe((state, previous) => {
  for (const view of views) view.render(state, previous);
});

// Skip links move the focus without changing the URL (the page keeps nothing in it).
for (const [link, target] of [
  ['skip-to-add', 'add-title'],
  ['skip-to-list', 'search'],
] as const) {
  byId(link, HTMLAnchorElement).addEventListener('click', (event) => {
    event.preventDefault();
    byId(target, HTMLInputElement).focus();
  });
}

let liveTimer: ReturnType<typeof setTimeout> | undefined;
function onChange(type: string): void {
  if (!CHANGES.has(type)) return;
  clearTimeout(liveTimer);
  liveTimer = setTimeout(() => void catalogue.reload(), LIVE_DEBOUNCE_MS);
}

async function start(): Promise<void> {
  await session.ask('');
  await catalogue.search(store.get().searchText);
  searchView.focus();
  follow(api.token, onChange, (feed) => store.update({ feed }));
}

signOutButton.addEventListener('click', () => {
  stop();
  clearTimeout(liveTimer);
  catalogue.forget();
  session.end();
  addForm.reset();
  store.update(INITIAL_STATE);
  void start();
});

void start();
