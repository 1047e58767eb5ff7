import { onTokenRefused, signIn, signOut } from './api.ts';
import { byId, say } from './dom.ts';

const dialog = byId('signin-dialog', HTMLDialogElement);
const form = byId('signin-form', HTMLFormElement);
const username = byId('username', HTMLInputElement);
const password = byId('password', HTMLInputElement);
const note = byId('signin-note', HTMLElement);
const error = byId('signin-error', HTMLElement);

let waiting: (() => void)[] = [];
let signedIn = false;

/** 429: when the service will take another try (Retry-After, RFC 9110 §10.2.3, in seconds). */
function retryText(retryAfter: string | null, now = Date.now()): string {
  const seconds = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  if (seconds === undefined) return 'Try again later.';
  const at = new Date(now + seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  const wait = seconds < 60 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`;
  return `Try again in ${wait} (at ${at}).`;
}

function open(message: string): void {
  say(note, message);
  say(error, '');
  password.value = '';
  if (!dialog.open) dialog.showModal();
  (username.value === '' ? username : password).focus();
}

/** The first sign-in: the catalogue stays hidden until it succeeds. */
export function askToSignIn(): Promise<void> {
  open('');
  return new Promise((resolve) => waiting.push(resolve));
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  void (async () => {
    say(error, '');
    const answer = await signIn(username.value, password.value);
    if (answer.status === 200) {
      password.value = '';
      signedIn = true;
      dialog.close();
      const resume = waiting;
      waiting = [];
      for (const done of resume) done();
      return;
    }
    say(error, answer.status === 429 ? `${answer.message}. ${retryText(answer.headers.get('retry-after'))}` : answer.message);
    password.select();
  })();
});

// Escape must not leave the page without a token behind a closed dialog.
dialog.addEventListener('cancel', (event) => event.preventDefault());

/** Expiry: a dialog over the page; every form keeps what was typed, and the refused request is sent again. */
onTokenRefused(() => {
  if (signedIn) open('Your session has expired. Sign in again to continue; nothing you typed is lost.');
  signedIn = false;
  return new Promise((resolve) => waiting.push(resolve));
});

/** Forgets the token; the caller clears what was shown. */
export function endSession(): void {
  signOut();
  signedIn = false;
}
