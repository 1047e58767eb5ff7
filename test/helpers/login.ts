import assert from 'node:assert/strict';

/*
 * Logging in over HTTP as a client does, for a service the test did not build in-process (the CLI,
 * the binary, the embedding example): its secret is its own, so the test cannot sign a token for it
 * the way helpers/app.ts does, and asks POST /token instead.
 */

/** POST /token at `url` (the service's base, mount path included) with these credentials; the answer as it came. */
export function login(url: string, password: string, username = 'admin'): Promise<Response> {
  return fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
}

/** The token a login answers with; the test fails here, saying why, unless the login is answered 200. */
export async function loginToken(url: string, password: string, username = 'admin'): Promise<string> {
  const res = await login(url, password, username);
  const body = (await res.json()) as { status: number; message: string; data: { token: string } };
  assert.equal(res.status, 200, `POST /token as ${username}: ${body.message}`);
  assert.equal(body.status, 200, 'the envelope gives the status the response has');
  return body.data.token;
}
