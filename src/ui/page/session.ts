import type { Api } from './api.ts';
import type { Store } from './state.ts';

/** Signing in: the first time, and again whenever the service refuses the token. No DOM. */
export interface Session {
  /** Opens the sign-in dialog with `note`; resolves once the person has signed in. */
  ask(note: string): Promise<void>;
  submit(username: string, password: string): Promise<boolean>;
  /** Forgets the token; the caller clears what was shown. */
  end(): void;
}

/** 429: when the service will take another try (Retry-After, RFC 9110 §10.2.3, in seconds). */
function retryText(retryAfter: string | null, now = Date.now()): string {
  const seconds = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  if (seconds === undefined) return 'Try again later.';
  const at = new Date(now + seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  const wait = seconds < 60 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`;
  return `Try again in ${wait} (at ${at}).`;
}

/** `signedIn`: called after each sign-in (the change feed resumes then). */
export function createSession(api: Api, store: Store, signedIn: () => void): Session {
  /** Whoever waits for the person to sign in: the start, and requests the service refused. */
  let waiting: (() => void)[] = [];

  return {
    ask(note) {
      store.update({ signIn: { open: true, note, error: '' } });
      return new Promise((resolve) => waiting.push(resolve));
    },
    async submit(username, password) {
      store.update({ signIn: { ...store.get().signIn, error: '' } });
      const answer = await api.signIn(username, password);
      if (answer.status !== 200) {
        const error = answer.status === 429 ? `${answer.message}. ${retryText(answer.headers.get('retry-after'))}` : answer.message;
        store.update({ signIn: { ...store.get().signIn, error } });
        return false;
      }
      store.update({ signedIn: true, signIn: { open: false, note: '', error: '' } });
      const resume = waiting;
      waiting = [];
      for (const done of resume) done();
      signedIn();
      return true;
    },
    end() {
      api.forget();
      store.update({ signedIn: false });
    },
  };
}
