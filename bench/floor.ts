import { hash } from 'node:crypto';
import { closeSync, fdatasync, ftruncateSync, openSync, write } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { BEARER_CHALLENGE } from '../src/auth/authorize.ts';
import { ANSWERS } from '../src/http/messages.ts';
import { RequestIds } from '../src/http/request-ids.ts';
import { encodedReply, envelopeText, writeBody } from '../src/http/respond.ts';
import type { EnvelopeReply } from '../src/http/route.ts';
import { bookJson } from '../src/model/book.ts';
import { seedBook } from './scenarios.ts';

/**
 * The floor, route by route: part of what the contract asks of each bench scenario's request and
 * answer, and nothing else. Every answer carries the envelope and the header fields of the
 * service's answer to that request (docs/contract.md, "Envelope"), a request id unique in the
 * process, and an ETag, `Location` or `WWW-Authenticate` where the route has one; a written book's
 * ETag is a SHA-256 of its JSON ("Conditional requests"). A protected route answers 401 without an
 * Authorization header. A request with a body has it read and parsed as JSON. A write is made
 * durable before it is answered: a record with its CRC-32 ("Durability") appended to a file and
 * fdatasync'd, one batch at a time, the next batch written before the last one is answered, as the
 * service's store does. Not done, though the contract asks for them: verifying the token, checking
 * the login, validating a book, the body limit, the Host check; nor routing beyond the bench's
 * paths, an index, a limit or a metric. So floor/ceiling is a lower bound on what the contract
 * costs, and service/floor an upper bound on what the service's own design adds
 * (docs/performance.md, "What the contract itself costs: the floor"). Answers are written by the
 * service's own writer (src/http/respond.ts), so the floor and the service pay the same for them.
 */

/** A strong tag of the shape the service sends for a book: the floor's books are never read back, so any stands. */
const READ = encodedReply(ANSWERS.bookRetrieved, bookJson({ id: 42, ...seedBook(41) }), { etag: '"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZn"' });
const LIST = encodedReply(ANSWERS.booksRetrieved, `[${Array.from({ length: 100 }, (_, i) => bookJson({ id: i + 1, ...seedBook(i) })).join(',')}]`, {
  etag: '"books-QUJDREVGR0hJSktM-100"',
  vary: 'Accept-Encoding',
});
const UNAUTHORIZED = encodedReply(ANSWERS.tokenRequired, 'null', { 'www-authenticate': BEARER_CHALLENGE });
/** A token of the length the service issues (an HS256 JWT of `sub`, `iat`, `exp`). */
const TOKEN = encodedReply(ANSWERS.tokenGenerated, `{"token":"${'x'.repeat(36)}.${'y'.repeat(70)}.${'z'.repeat(43)}"}`);
const INVALID_INPUT = encodedReply(ANSWERS.invalidInput, 'null');
const INVALID_PAYLOAD = encodedReply(ANSWERS.invalidRequestPayload, 'null');
const NOT_FOUND = encodedReply(ANSWERS.notFound, 'null');

/**
 * The floor's journal is cut back to empty past this: it keeps no state, only the cost of
 * appending. A bench round appends about 85 bytes per write; 64 MiB keeps the cut out of all but
 * the longest runs while bounding the disk a run can take.
 */
const JOURNAL_LIMIT = 64 * 1024 * 1024;

/** Writes that wait for the durable append of their records, one batch in flight (group commit). */
class GroupCommit {
  readonly #fd: number;
  #records = '';
  #waiting: (() => void)[] = [];
  #busy = false;
  #bytes = 0;
  readonly #sync: Sync;

  constructor(fd: number, sync: Sync) {
    this.#fd = fd;
    this.#sync = sync;
  }

  add(record: string, durable: () => void): void {
    this.#records += record;
    this.#waiting.push(durable);
    if (!this.#busy) this.#flush();
  }

  #flush(): void {
    const text = this.#records;
    const batch = this.#waiting;
    this.#records = '';
    this.#waiting = [];
    this.#busy = true;
    if (this.#bytes > JOURNAL_LIMIT) {
      ftruncateSync(this.#fd, 0);
      this.#bytes = 0;
    }
    this.#bytes += Buffer.byteLength(text);
    write(this.#fd, text, (err) => {
      if (err) throw err;
      this.#sync(this.#fd, (syncErr) => {
        if (syncErr) throw syncErr;
        this.#busy = false;
        if (this.#waiting.length > 0) this.#flush();
        for (const durable of batch) durable();
      });
    });
  }
}

/** How a batch is made durable: fdatasync, or a test's stand-in that can hold it. */
export type Sync = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

/** A floor server whose writes go to a file in `dir`; `closeJournal` closes that file once the server is closed. */
export function createFloorServer(dir: string, sync: Sync = fdatasync): Server & { closeJournal(): void } {
  const fd = openSync(join(dir, 'floor-journal'), 'a');
  const commits = new GroupCommit(fd, sync);
  const ids = new RequestIds();
  let seq = 0;
  let nextId = 0;

  // Every reply answered this way is made by encodedReply, so its body is a Buffer.
  const answer = (res: ServerResponse, { status, body, headers }: EnvelopeReply): void => writeBody(res, ids.next(), status, body as Buffer, headers);

  /** The body as a JSON object, or the route's 400 answer (`refused`). */
  const readJson = (req: IncomingMessage, res: ServerResponse, refused: EnvelopeReply, then: (value: Record<string, unknown>) => void): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let value: unknown;
      try {
        value = JSON.parse((chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString());
      } catch {
        value = undefined;
      }
      if (typeof value === 'object' && value !== null) then(value as Record<string, unknown>);
      else answer(res, refused);
    });
  };

  /** A book made of the body's fields (over a seeded one's for an update), durable before its answer. */
  const writeBook = (res: ServerResponse, body: Record<string, unknown>, id: number, created: boolean): void => {
    const base = seedBook(id);
    const json = bookJson({ id, title: String(body.title ?? base.title), author: String(body.author ?? base.author), year: Number(body.year ?? base.year) });
    const record = `${++seq} ${json}`;
    commits.add(`${record} ${crc32(record)}\n`, () => {
      const { status, message } = created ? ANSWERS.bookCreated : ANSWERS.bookUpdated;
      const etag = `"${hash('sha256', json, 'base64url')}"`;
      writeBody(res, ids.next(), status, envelopeText(status, message, json), created ? { etag, location: `/book/${id}` } : { etag });
    });
  };

  const server = createServer((req, res) => {
    const { method, url } = req;
    if (url !== '/token' && req.headers.authorization === undefined) {
      answer(res, UNAUTHORIZED);
    } else if (method === 'GET' && url === '/books') {
      answer(res, LIST);
    } else if (method === 'GET' && url?.startsWith('/book/') === true) {
      answer(res, READ);
    } else if (method === 'POST' && url === '/token') {
      readJson(req, res, INVALID_PAYLOAD, () => answer(res, TOKEN));
    } else if (method === 'POST' && url === '/book') {
      readJson(req, res, INVALID_INPUT, (body) => writeBook(res, body, ++nextId, true));
    } else if (method === 'PUT' && url?.startsWith('/book/') === true) {
      readJson(req, res, INVALID_INPUT, (body) => writeBook(res, body, Number(url.slice(6)), false));
    } else {
      answer(res, NOT_FOUND);
    }
  });
  return Object.assign(server, { closeJournal: () => closeSync(fd) });
}
