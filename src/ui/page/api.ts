/**
 * The one way the page talks to the service: the envelope's `{status, message, data}` as it is,
 * plus the headers the page needs. The token lives in this module's memory only (never a cookie,
 * the URL or Web Storage): reloading the page or signing out forgets it.
 */
export interface Answer<T = unknown> {
  readonly status: number;
  readonly message: string;
  readonly data: T;
  readonly headers: Headers;
}

export interface Book {
  readonly id: number;
  readonly title: string;
  readonly author: string;
  readonly year: number;
}

export type BookFields = Omit<Book, 'id'>;

let token: string | undefined;
let expired: (() => Promise<void>) | undefined;
const signedInListeners = new Set<() => void>();

/** What the page does when the token is refused: ask the person to sign in again, resolved once they have. */
export function onTokenRefused(handler: () => Promise<void>): void {
  expired = handler;
}

/** Called whenever a new token is in hand (the change feed resumes then). */
export function onSignedIn(listener: () => void): void {
  signedInListeners.add(listener);
}

export function currentToken(): string | undefined {
  return token;
}

export function signOut(): void {
  token = undefined;
}

/** POST /token. A 200 keeps the token; any other answer is returned for the page to show. */
export async function signIn(username: string, password: string): Promise<Answer<{ token: string } | null>> {
  const answer = await send<{ token: string } | null>('POST', 'token', { username, password }, {}, false);
  if (answer.status === 200 && answer.data !== null) {
    token = answer.data.token;
    for (const listener of signedInListeners) listener();
  }
  return answer;
}

/**
 * A protected request. A 401 means the token expired (or the secret changed): the person is asked
 * to sign in again and the request is then sent once more, so nothing they were doing is lost.
 */
export async function call<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
  for (let attempt = 0; ; attempt++) {
    const answer = await send<T>(method, path, body, headers, true);
    if (answer.status !== 401 || expired === undefined || attempt === 2) return answer;
    token = undefined;
    await expired();
  }
}

async function send<T>(method: string, path: string, body: unknown, headers: Record<string, string>, auth: boolean): Promise<Answer<T>> {
  const sent: Record<string, string> = { ...headers };
  if (auth && token !== undefined) sent.authorization = token;
  if (body !== undefined) sent['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers: sent, cache: 'no-store', ...(body !== undefined && { body: JSON.stringify(body) }) });
  } catch {
    return { status: 0, message: 'The service cannot be reached. Check the connection and try again.', data: null as T, headers: new Headers() };
  }
  const envelope = (await response.json().catch(() => null)) as { message?: unknown; data?: unknown } | null;
  const message = typeof envelope?.message === 'string' ? envelope.message : `Unexpected answer (HTTP ${response.status})`;
  return { status: response.status, message, data: (envelope?.data ?? null) as T, headers: response.headers };
}
