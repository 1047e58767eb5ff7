import { say } from './dom.ts';
import type { AppState } from './state.ts';

export interface SignInElements {
  readonly dialog: HTMLDialogElement;
  readonly form: HTMLFormElement;
  readonly username: HTMLInputElement;
  readonly password: HTMLInputElement;
  readonly note: HTMLElement;
  readonly error: HTMLElement;
}

export interface SignInHandlers {
  submit(username: string, password: string): Promise<boolean>;
}

/** The sign-in dialog: over the page, so every form keeps what was typed while the person signs in again. */
export function createSignInDialog(elements: SignInElements, handlers: SignInHandlers): { render(state: AppState, previous: AppState): void } {
  const { dialog, form, username, password, note, error } = elements;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void handlers.submit(username.value, password.value).then((signedIn) => {
      if (signedIn) password.value = '';
      else password.select();
    });
  });
  // Escape must not leave the page without a token behind a closed dialog.
  dialog.addEventListener('cancel', (event) => event.preventDefault());
  return {
    render(state, before) {
      const signIn = state.signIn;
      if (signIn === before.signIn) return;
      say(note, signIn.note);
      say(error, signIn.error);
      if (!signIn.open) {
        if (dialog.open) dialog.close();
        return;
      }
      if (!dialog.open) {
        password.value = '';
        dialog.showModal();
        (username.value === '' ? username : password).focus();
      }
    },
  };
}
