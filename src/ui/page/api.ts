/**
 * The one way the page talks to the service: the envelope's `{status, message, data}` as it is,
 * plus the headers the page needs. The token lives in this client's memory only (never a cookie,
 * the URL or Web Storage): reloading the page or signing out forgets it.
 */
export interface Answer<T = unknown> {
  readonly status: number;
  readonly message: string;
  readonly data: T;
  readonly headers: Headers;
}

export interface CallOptions {
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Aborting it gives up the request: the answer is then status 0. */
  readonly signal?: AbortSignal;
}

export interface Api {
  /** POST /token. A 200 keeps the token; any other answer is returned for the page to show. */
  signIn(username: string, password: string): Promise<Answer<{ token: string } | null>>;
  /**
   * A protected request. A 401 means the token expired (or the secret changed): the person is
   * asked to sign in again and the request is then sent once more, so nothing they were doing is lost.
   */
  call<T = unknown>(method: string, path: string, options?: CallOptions): Promise<Answer<T>>;
  token(): string | undefined;
  forget(): void;
}

/** A request that got no answer (no network, or given up): the page shows this and keeps what was typed. */
export const UNREACHABLE = 'The service cannot be reached. Check the connection and try again.';

/** `reauthenticate`: asks the person to sign in again; resolves once they have (signIn was called). */
export function createApi(reauthenticate: () => Promise<void>): Api {
  let token: string | undefined;

  async function send<T>(method: string, path: string, { body, headers = {}, signal }: CallOptions, auth: boolean): Promise<Answer<T>> {
    const sent: Record<string, string> = { ...headers };
    if (auth && token !== undefined) sent.authorization = token;
    if (body !== undefined) sent['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(path, { method, headers: sent, cache: 'no-store', ...(signal !== undefined && { signal }), ...(body !== undefined && { body: JSON.stringify(body) }) });
    } catch {
      return { status: 0, message: UNREACHABLE, data: null as T, headers: new Headers() };
    }
    const envelope = (await response.json().catch(() => null)) as { message?: unknown; data?: unknown } | null;
    const message = typeof envelope?.message === 'string' ? envelope.message : `Unexpected answer (HTTP ${response.status})`;
    return { status: response.status, message, data: (envelope?.data ?? null) as T, headers: response.headers };
  }

  return {
    async signIn(username, password) {
      const answer = await send<{ token: string } | null>('POST', 'token', { body: { username, password } }, false);
      if (answer.status === 200 && answer.data !== null) token = answer.data.token;
      return answer;
    },
    async call<T>(method: string, path: string, options: CallOptions = {}): Promise<Answer<T>> {
      for (let attempt = 0; ; attempt++) {
        const answer = await send<T>(method, path, options, true);
        if (answer.status !== 401 || attempt === 2 || options.signal?.aborted === true) return answer;
        token = undefined;
        await reauthenticate();
      }
    },
    token: () => token,
    forget() {
      token = undefined;
    },
  };
}
