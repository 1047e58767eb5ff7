import type { AppState } from './state.ts';

/** Typing in Search waits this long for a pause before asking the service. */
const SEARCH_DEBOUNCE_MS = 250;

export interface SearchHandlers {
  /** The text changed (each key). */
  typed(text: string): void;
  /** Search for it now: after a pause in typing, at once on Enter; Escape clears it first. */
  search(text: string): void;
}

export interface SearchView {
  render(state: AppState): void;
  focus(): void;
}

export function createSearchView(input: HTMLInputElement, handlers: SearchHandlers): SearchView {
  let timer: ReturnType<typeof setTimeout> | undefined;
  input.addEventListener('input', () => {
    handlers.typed(input.value);
    clearTimeout(timer);
    timer = setTimeout(() => handlers.search(input.value), SEARCH_DEBOUNCE_MS);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' && event.key !== 'Escape') return;
    event.preventDefault();
    if (event.key === 'Escape') handlers.typed('');
    clearTimeout(timer);
    handlers.search(input.value);
  });
  return {
    render(state) {
      // Only a change made elsewhere (a book shown that the search hid, signing out) reaches the input.
      if (input.value !== state.searchText) {
        clearTimeout(timer);
        input.value = state.searchText;
      }
    },
    focus: () => input.focus(),
  };
}
