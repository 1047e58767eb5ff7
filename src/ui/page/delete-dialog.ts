import { say } from './dom.ts';
import type { AppState } from './state.ts';

export interface DeleteDialogElements {
  readonly dialog: HTMLDialogElement;
  readonly question: HTMLElement;
  readonly error: HTMLElement;
  readonly confirm: HTMLButtonElement;
  readonly cancel: HTMLButtonElement;
}

export interface DeleteDialogHandlers {
  confirm(): void;
  close(): void;
}

/** Asks before deleting, about the version the service has now (the one the DELETE names with If-Match). */
export function createDeleteDialog(elements: DeleteDialogElements, handlers: DeleteDialogHandlers): { render(state: AppState, previous: AppState): void } {
  const { dialog, question, error, confirm, cancel } = elements;
  confirm.addEventListener('click', () => handlers.confirm());
  cancel.addEventListener('click', () => handlers.close());
  dialog.addEventListener('close', () => handlers.close());
  return {
    render(state, before) {
      const removal = state.removal;
      if (removal === before.removal) return;
      if (removal === undefined) {
        if (dialog.open) dialog.close();
        return;
      }
      const { book, changed } = removal;
      const asked = `Delete “${book.title}” by ${book.author} (${book.year})? This cannot be undone.`;
      say(question, changed ? `This book was changed since you saw it; this is how it is now. ${asked}` : asked);
      say(error, removal.error);
      if (!dialog.open) {
        dialog.showModal();
        // The safe choice has the focus: Enter right away cancels.
        cancel.focus();
      } else if (before.removal !== undefined && before.removal.book !== book) cancel.focus();
    },
  };
}
