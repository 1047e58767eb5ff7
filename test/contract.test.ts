import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyToken } from '../src/auth/jwt.ts';
import { startApp, TEST_PASSWORD, TEST_SECRET, TEST_USER, type TestApp } from './helpers/app.ts';

/**
 * The contract as data: each rule of the original specification (numbered as it numbers them:
 * §4 endpoints, §5 authentication, §7 errors; docs/contract.md restates them all) and the statuses
 * docs/contract.md adds, each proven over HTTP. Rows run in order against one app that starts with
 * books 1 and 2 stored.
 */
interface Row {
  rule: string;
  method: string;
  path: string;
  condition: string;
  body?: unknown;
  rawBody?: string;
  /** 'none': no Authorization header; 'invalid': a token that fails validation. Default: valid. */
  auth?: 'none' | 'invalid';
  status: number;
  message: string;
  /** Expected data; errors always expect null. */
  data?: unknown;
  /** For data that differs per run (a token): a check that throws when it is wrong. */
  checkData?: (data: unknown) => void;
  /** The app to send it to: 'unsignable' cannot sign tokens, 'throttled' allows one failed login. */
  app?: 'unsignable' | 'throttled';
}

const LOGIN = { username: TEST_USER, password: TEST_PASSWORD };
const DUNE = { title: 'Dune', author: 'Frank Herbert', year: 1965 };

/** `{token}` and nothing else, a token the app's secret verifies, issued to the user who logged in. */
function isIssuedToken(data: unknown): void {
  assert.deepEqual(Object.keys(data as object), ['token']);
  const claims = verifyToken((data as { token: string }).token, [Buffer.from(TEST_SECRET)], Date.now() / 1000);
  assert.equal(claims.sub, TEST_USER);
}

const ROWS: Row[] = [
  { rule: '§4.1.1, §7', method: 'POST', path: '/token', condition: 'body cannot be parsed into a LoginRequest', rawBody: '{"username":1}', auth: 'none', status: 400, message: 'Invalid request payload' },
  { rule: '§4.1.2, §7', method: 'POST', path: '/token', condition: 'the password is wrong', body: { ...LOGIN, password: 'x' }, auth: 'none', status: 401, message: 'Invalid credentials' },
  { rule: '§4.1.2, §7', method: 'POST', path: '/token', condition: 'the username is wrong', body: { ...LOGIN, username: 'x' }, auth: 'none', status: 401, message: 'Invalid credentials' },
  { rule: '§4.1.3', method: 'POST', path: '/token', condition: 'the credentials match', body: LOGIN, auth: 'none', status: 200, message: 'Token generated successfully', checkData: isIssuedToken },
  { rule: '§4.1.4, §7', method: 'POST', path: '/token', condition: 'signing the token fails', body: LOGIN, auth: 'none', status: 500, message: 'Could not generate token', app: 'unsignable' },
  { rule: '§4.2.1, §7', method: 'POST', path: '/book', condition: 'body cannot be parsed into a Book', body: { title: 'Dune' }, status: 400, message: 'Invalid input' },
  { rule: '§4.2.2', method: 'POST', path: '/book', condition: 'a valid Book', body: DUNE, status: 201, message: 'Book created successfully', data: { id: 3, ...DUNE } },
  {
    rule: '§4.3',
    method: 'GET',
    path: '/books',
    condition: 'always',
    status: 200,
    message: 'Books retrieved successfully',
    data: [{ id: 1, title: 'one', author: 'a', year: 1 }, { id: 2, title: 'two', author: 'a', year: 1 }, { id: 3, ...DUNE }],
  },
  { rule: '§4.4.1, §7', method: 'GET', path: '/book/99', condition: 'no book has that id', status: 404, message: 'Book not found' },
  { rule: '§4.4.2', method: 'GET', path: '/book/3', condition: 'the book exists', status: 200, message: 'Book retrieved successfully', data: { id: 3, ...DUNE } },
  { rule: '§4.5.1, §7', method: 'PUT', path: '/book/99', condition: 'no book has that id (before the body is read)', rawBody: '{bad', status: 404, message: 'Book not found' },
  { rule: '§4.5.2, §7', method: 'PUT', path: '/book/3', condition: 'body cannot be parsed', rawBody: '{bad', status: 400, message: 'Invalid input' },
  { rule: '§4.5.2, §4.5.3', method: 'PUT', path: '/book/3', condition: 'a partial body: absent fields keep their value', body: { year: 1966 }, status: 200, message: 'Book updated successfully', data: { id: 3, ...DUNE, year: 1966 } },
  { rule: '§4.6.1, §7', method: 'DELETE', path: '/book/99', condition: 'the deletion reports a failure', status: 404, message: 'Book not found' },
  { rule: '§4.6.2', method: 'DELETE', path: '/book/3', condition: 'the book exists', status: 200, message: 'Book deleted successfully', data: null },
  { rule: '§4.6.2', method: 'GET', path: '/book/3', condition: 'a GET after the DELETE', status: 404, message: 'Book not found' },
  { rule: '§5.1', method: 'GET', path: '/healthz', condition: 'a public route without a token (docs/contract.md)', auth: 'none', status: 200, message: 'OK', data: { status: 'ok' } },
  ...(['POST /book', 'GET /books', 'GET /book/1', 'PUT /book/1', 'DELETE /book/1'] as const).flatMap((route): Row[] => {
    const [method, path] = route.split(' ') as [string, string];
    return [
      { rule: '§5.6, §7', method, path, condition: 'no Authorization header', auth: 'none', status: 401, message: 'Authorization token required' },
      { rule: '§5.7, §7', method, path, condition: 'a token that fails validation', auth: 'invalid', status: 401, message: 'Invalid token' },
    ];
  }),
  { rule: 'contract: Paths and ids', method: 'GET', path: '/book/abc', condition: '{id} is not decimal digits', status: 400, message: 'Invalid book id' },
  { rule: 'contract: Paths and ids', method: 'GET', path: '/shelves', condition: 'an unknown path', auth: 'none', status: 404, message: 'Not found' },
  { rule: 'contract: Paths and ids', method: 'DELETE', path: '/books', condition: 'a known path with another method', auth: 'none', status: 405, message: 'Method not allowed' },
  { rule: 'contract: Bodies', method: 'POST', path: '/book', condition: 'a body over 64 KiB', rawBody: ' '.repeat(64 * 1024 + 1), status: 413, message: 'Payload too large' },
  { rule: 'contract: Authentication', method: 'POST', path: '/token', condition: 'a failed login', body: { ...LOGIN, password: 'x' }, auth: 'none', status: 401, message: 'Invalid credentials', app: 'throttled' },
  { rule: 'contract: Authentication', method: 'POST', path: '/token', condition: 'after LOGIN_MAX_FAILURES failures', body: LOGIN, auth: 'none', status: 429, message: 'Too many login attempts', app: 'throttled' },
];

describe('the contract table (docs/contract.md, "Messages")', () => {
  const apps: Record<'main' | 'unsignable' | 'throttled', TestApp | undefined> = { main: undefined, unsignable: undefined, throttled: undefined };
  before(async () => {
    apps.main = await startApp();
    apps.unsignable = await startApp({ secret: new Proxy(new Uint8Array(32), {}) });
    apps.throttled = await startApp({ loginMaxFailures: 1 });
    for (const title of ['one', 'two']) await apps.main.request('POST', '/book', { body: { title, author: 'a', year: 1 } });
  });
  after(() => Promise.all(Object.values(apps).map((a) => a?.close())));

  for (const row of ROWS) {
    it(`${row.rule}: ${row.method} ${row.path} when ${row.condition} → ${row.status} ${row.message}`, async () => {
      const app = apps[row.app ?? 'main'] as TestApp;
      const res = await app.request(row.method, row.path, {
        ...(row.body !== undefined && { body: row.body }),
        ...(row.rawBody !== undefined && { rawBody: row.rawBody }),
        ...(row.auth === 'none' && { auth: false }),
        ...(row.auth === 'invalid' && { headers: { authorization: `${app.token()}x` } }),
      });
      assert.equal(res.status, row.status, res.text);
      assert.equal(res.json.status, row.status);
      assert.equal(res.json.message, row.message);
      if (row.status >= 400) assert.equal(res.json.data, null);
      else if (row.data !== undefined) assert.deepEqual(res.json.data, row.data);
      row.checkData?.(res.json.data);
    });
  }
});
