import { mutatedBody, randomText, validBook, validPatch, type Expectation } from './bodies.ts';
import type { Rng } from './rng.ts';

/** One request as bytes will be sent; `kind` names what made it, for the figures. */
export interface FuzzRequest {
  kind: string;
  method: string;
  path: string;
  version: string;
  headers: [string, string][];
  body: Buffer | undefined;
  /** `length`: a correct Content-Length is added; `chunked`: sent chunked; `raw`: as the headers say. */
  framing: 'length' | 'chunked' | 'raw';
  /** For a well-addressed write with a valid token: must the body be accepted or refused? */
  expect?: Expectation;
}

export interface FuzzContext {
  /** A valid token (a bare JWT). */
  token: string;
  /** Ids of books that exist now, and one past the highest ever assigned. */
  ids: readonly number[];
  nextId: number;
  /** The configured credential pair, for the occasional successful login. */
  username: string;
  password: string;
}

export function encodeRequest(r: FuzzRequest): Buffer {
  let head = `${r.method} ${r.path} HTTP/${r.version}\r\n`;
  for (const [name, value] of r.headers) head += `${name}: ${value}\r\n`;
  const body = r.body ?? Buffer.alloc(0);
  if (r.framing === 'length' && r.body !== undefined) head += `Content-Length: ${body.length}\r\n`;
  if (r.framing === 'chunked') {
    head += 'Transfer-Encoding: chunked\r\n\r\n';
    const half = body.length >> 1;
    const chunk = (b: Buffer): string => (b.length === 0 ? '' : `${b.length.toString(16)}\r\n${b.toString('latin1')}\r\n`);
    return Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(`${chunk(body.subarray(0, half))}${chunk(body.subarray(half))}0\r\n\r\n`, 'latin1')]);
  }
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body]);
}

function someId(rng: Rng, ctx: FuzzContext): number {
  if (ctx.ids.length > 0 && rng.chance(0.75)) return rng.pick(ctx.ids);
  return rng.range(1, ctx.nextId + 2);
}

function mutateToken(rng: Rng, token: string): string {
  const segments = token.split('.');
  switch (rng.int(11)) {
    case 0: {
      const i = rng.int(token.length);
      return token.slice(0, i) + String.fromCharCode(token.charCodeAt(i) ^ (1 << rng.int(7))) + token.slice(i + 1);
    }
    case 1:
      return [segments[1], segments[0], segments[2]].join('.');
    case 2:
      return [segments[0], segments[2], segments[1]].join('.');
    case 3:
      return segments.slice(0, rng.range(1, 2)).join('.');
    case 4:
      return `${token}.${segments[2] ?? ''}`;
    case 5:
      return token.slice(0, rng.int(token.length));
    case 6:
      return `${Buffer.from(rng.pick(['{"alg":"none"}', '{"alg":"HS512"}', '{"alg":"RS256"}', '[]'])).toString('base64url')}.${segments[1]}.${segments[2]}`;
    case 7:
      return `${rng.pick(['Bearer', 'bearer', 'BEARER', 'Basic', 'Token', 'Bearer  '])} ${token}`;
    case 8:
      return rng.pick(['', ' ', 'Bearer', 'Bearer ', 'null', 'undefined', '..', '...']);
    case 9:
      return `${token}${rng.pick(['=', '==', ' ', 'A', '%'])}`;
    default:
      return randomText(rng, 1, 30).replace(/[\u0000-\u001f\u007f-\uffff]/g, 'x');
  }
}

const ID_FORMS = ['0', '007', '-1', '1.5', '1e3', '%31', '99999999999999999999', '9007199254740993', 'abc', '', '0x1', '١', '+1'];

function mutatePath(rng: Rng, ctx: FuzzContext): string {
  const base = rng.pick(['/books', '/book', `/book/${someId(rng, ctx)}`, '/token', '/healthz', '/openapi.json', '/']);
  switch (rng.int(12)) {
    case 0:
      return `/book/${rng.pick(ID_FORMS)}`;
    case 1:
      return `${base}/`;
    case 2:
      return `${base}//`;
    case 3:
      return `/${base}`;
    case 4:
      return `${base}?${rng.pick(['x=1', 'id=1', '', '?', '%zz', 'a=%00'])}`;
    case 5:
      return base.toUpperCase();
    case 6:
      return `${base}/${rng.pick(['extra', '..', '.', '%2e%2e', '1'])}`;
    case 7:
      return `/${'a'.repeat(rng.pick([100, 4000, 9000]))}`;
    case 8:
      return `${base}${rng.pick(['#frag', '%00', '%', ';x', '\u00e9'])}`;
    case 9:
      return rng.pick(['*', 'http://localhost/books', 'localhost:80', '', 'books']);
    case 10:
      return `/../${base}`;
    default:
      return base;
  }
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'get', 'Post', 'FOO', 'G ET', 'GET\t'];

function extraHeader(rng: Rng): [string, string][] {
  switch (rng.int(12)) {
    case 0:
      return [['X-Request-Id', rng.pick([randomText(rng, 1, 20), 'a'.repeat(200), '\u00ff\u00fe', 'id\u0001x'])]];
    case 1:
      return [['Content-Type', rng.pick(['text/plain', 'application/xml', 'application/json; charset=latin1', '', 'multipart/form-data; boundary=x'])]];
    case 2:
      return [['If-Match', rng.pick(['*', '"x"', 'W/"x"', '', '"a", "b"'])]];
    case 3:
      return [['Connection', rng.pick(['close', 'keep-alive', 'upgrade', 'foo'])]];
    case 4:
      return [['Upgrade', 'websocket'], ['Connection', 'Upgrade']];
    case 5:
      return [['Expect', rng.pick(['100-continue', 'nonsense'])]];
    case 6:
      return [[rng.pick(['X Bad', 'X:Colon', '', 'Ä', '(x)']), 'v']];
    case 7:
      return [['X-Ctl', rng.pick(['\u0000', '\u007f', '\u0001a', 'tab\there'])]];
    case 8:
      return [['X-Big', 'b'.repeat(rng.pick([1000, 8000, 17_000]))]];
    case 9:
      return Array.from({ length: rng.pick([50, 200]) }, (_, i): [string, string] => [`X-H${i}`, 'v']);
    case 10:
      return [['Accept', rng.pick(['*/*', 'text/html', 'application/json;q=0', ''])], ['Origin', 'https://evil.example']];
    default:
      return [['Authorization', rng.pick(['Basic YTpi', 'Bearer x', 'x'])]];
  }
}

function framingCase(rng: Rng, base: FuzzRequest): FuzzRequest {
  const body = base.body ?? Buffer.from('{}');
  switch (rng.int(6)) {
    case 0:
      return { ...base, body, framing: 'chunked' };
    case 1:
      return { ...base, body, framing: 'raw', headers: [...base.headers, ['Content-Length', String(body.length)], ['Transfer-Encoding', 'chunked']] };
    case 2:
      return { ...base, body, framing: 'raw', headers: [...base.headers, ['Content-Length', rng.pick(['abc', '-1', '1.5', '', '0x10', ' 5 '])]] };
    case 3:
      return { ...base, body, framing: 'raw', headers: [...base.headers, ['Content-Length', String(body.length)], ['Content-Length', String(body.length + 1)]] };
    case 4:
      return { ...base, body: undefined, framing: 'raw', headers: [...base.headers, ['Content-Length', String(rng.pick([65 * 1024, 10 ** 9, 10 ** 20]))]] };
    default:
      return { ...base, body, framing: 'raw', headers: [...base.headers, ['Transfer-Encoding', rng.pick(['gzip', 'chunked, gzip', 'identity', 'x'])]] };
  }
}

/* Deletes nearly keep pace with creates, so GET /books stays small enough for 20,000 rounds. */
const KINDS = { create: 11, update: 9, delete: 8, read: 6, login: 4, body: 25, token: 12, path: 8, method: 6, header: 8, framing: 3 } as const;

/** The next request of a run: mostly plausible, each with one thing wrong (or nothing). */
export function nextRequest(rng: Rng, ctx: FuzzContext): FuzzRequest {
  const kind = rng.weighted(KINDS);
  const auth = (token: string): [string, string] => ['Authorization', token];
  const req = (method: string, path: string, body?: unknown): FuzzRequest => ({
    kind,
    method,
    path,
    version: '1.1',
    headers: [['Host', 'localhost'], auth(rng.chance(0.5) ? ctx.token : `Bearer ${ctx.token}`)],
    body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    framing: 'length',
  });
  const item = (): string => `/book/${someId(rng, ctx)}`;
  switch (kind) {
    case 'create':
      return { ...req('POST', '/book', validBook(rng)), expect: 'accept' };
    case 'update':
      return { ...req('PUT', item(), validPatch(rng)), expect: 'accept' };
    case 'delete':
      return req('DELETE', item());
    case 'read':
      return req(rng.pick(['GET', 'HEAD']), rng.chance(0.1) ? '/books' : item());
    case 'login':
      return req('POST', '/token', loginBody(rng, ctx));
    case 'body': {
      const { kind: mutation, body, expect } = mutatedBody(rng);
      const r = rng.chance(0.6) ? req('POST', '/book') : req('PUT', item());
      return { ...r, kind: `body:${mutation}`, body, expect };
    }
    case 'token': {
      const r = rng.chance(0.7) ? req(rng.pick(['GET', 'PUT', 'DELETE']), item(), rng.chance(0.5) ? validPatch(rng) : undefined) : req('POST', '/book', validBook(rng));
      return { ...r, headers: [['Host', 'localhost'], auth(mutateToken(rng, ctx.token))] };
    }
    case 'path':
      return req(rng.pick(['GET', 'POST', 'PUT', 'DELETE']), mutatePath(rng, ctx), rng.chance(0.5) ? validBook(rng) : undefined);
    case 'method':
      return req(rng.pick(METHODS), rng.pick(['/books', '/book', item(), '/token', '/healthz']), rng.chance(0.3) ? validBook(rng) : undefined);
    case 'header': {
      const r = rng.chance(0.5) ? req('GET', item()) : req('POST', '/book', validBook(rng));
      const headers = rng.chance(0.1) ? r.headers.filter(([n]) => n !== 'Host') : [...r.headers, ...extraHeader(rng)];
      return { ...r, headers, version: rng.chance(0.1) ? rng.pick(['1.0', '0.9', '2.0', '1.2']) : '1.1' };
    }
    case 'framing':
      return framingCase(rng, req('POST', '/book', validBook(rng)));
  }
}

function loginBody(rng: Rng, ctx: FuzzContext): unknown {
  const { username, password } = ctx;
  return rng.pick([
    { username, password },
    { username, password: randomText(rng, 0, 30) },
    { username: password, password: username },
    { username, password: `${password} ` },
    { username, password, extra: [1] },
    {},
    { username: 1, password: 2 },
    { username },
    [],
    null,
    { username, password: null },
  ]);
}
