import { clear, next, previous, reload, search, setRowActions } from './book-list.ts';
import { resetForms, startDelete, startEdit } from './book-form.ts';
import { byId, say } from './dom.ts';
import { follow, stop } from './feed.ts';
import { askToSignIn, endSession } from './session.ts';

/** Typing in Search waits this long for a pause before asking the service. */
const SEARCH_DEBOUNCE_MS = 250;
/** Changes from the feed arrive in bursts; the page is reloaded once per burst. */
const LIVE_DEBOUNCE_MS = 150;

const catalogue = byId('catalogue', HTMLElement);
const signOutButton = byId('sign-out', HTMLButtonElement);
const searchInput = byId('search', HTMLInputElement);
const feedStatus = byId('feed-status', HTMLElement);

setRowActions({
  edit: (book) => void startEdit(book),
  remove: (book) => startDelete(book),
});

byId('next', HTMLButtonElement).addEventListener('click', () => void next());
byId('prev', HTMLButtonElement).addEventListener('click', () => void previous());

let searchTimer: ReturnType<typeof setTimeout> | undefined;
searchInput.addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => void search(searchInput.value), SEARCH_DEBOUNCE_MS);
});
// Enter searches at once; Escape clears the search.
searchInput.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' || event.key === 'Escape') {
    event.preventDefault();
    if (event.key === 'Escape') searchInput.value = '';
    clearTimeout(searchTimer);
    void search(searchInput.value);
  }
});

let liveTimer: ReturnType<typeof setTimeout> | undefined;
function onChange(): void {
  clearTimeout(liveTimer);
  liveTimer = setTimeout(() => void reload(), LIVE_DEBOUNCE_MS);
}

async function start(): Promise<void> {
  catalogue.hidden = true;
  signOutButton.hidden = true;
  await askToSignIn();
  catalogue.hidden = false;
  signOutButton.hidden = false;
  await search(searchInput.value);
  searchInput.focus();
  follow(onChange, (isLive) => say(feedStatus, isLive ? 'Live: changes made elsewhere appear here as they happen.' : ''));
}

signOutButton.addEventListener('click', () => {
  stop();
  endSession();
  clear();
  resetForms();
  searchInput.value = '';
  say(feedStatus, '');
  void start();
});

void start();
