import type { Answer } from './client.ts';
import type { FuzzRequest } from './mutators.ts';

export interface Book {
  id: number;
  title: string;
  author: string;
  year: number;
}

/** What the request addresses, read the way docs/contract.md, "Paths and ids", says the service reads paths. */
type Target = { route: 'list' } | { route: 'create' } | { route: 'item'; id: number } | { route: 'other' };

function targetOf(path: string): Target {
  const q = path.indexOf('?');
  const p = q === -1 ? path : path.slice(0, q);
  if (/^\/books\/?$/.test(p)) return { route: 'list' };
  if (/^\/book\/?$/.test(p)) return { route: 'create' };
  const m = /^\/book\/(\d+)\/?$/.exec(p);
  if (m !== null && Number.isSafeInteger(Number(m[1]))) return { route: 'item', id: Number(m[1]) };
  return { route: 'other' };
}

/** docs/contract.md, "Books": exactly these keys in this order, strings not blank and ≤ 1000 code points. */
function bookProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'data is not a book';
  if (Object.keys(value).join() !== 'id,title,author,year') return `book keys are ${Object.keys(value).join()}`;
  const b = value as Book;
  if (!Number.isSafeInteger(b.id) || b.id < 1) return 'bad id';
  for (const s of [b.title, b.author]) {
    if (typeof s !== 'string' || s.trim() === '' || [...s].length > 1000) return 'a stored string breaks the rules';
  }
  if (!Number.isInteger(b.year) || b.year < -9999 || b.year > 9999) return 'a stored year breaks the rules';
  return undefined;
}

/**
 * The books the acknowledged answers imply. Every 2xx write is applied here; every answer about
 * a book is checked against what the model holds, so a lost, invented or half-applied change shows.
 */
export class BookModel {
  readonly books = new Map<number, Book>();
  highestId = 0;
  acknowledged = { created: 0, updated: 0, deleted: 0 };

  list(): Book[] {
    return [...this.books.values()].sort((a, b) => a.id - b.id);
  }

  /** A body the request says must be accepted (or refused) was not: what the oracle saw. */
  expectation(req: FuzzRequest, status: number): string | undefined {
    if (req.expect === undefined) return undefined;
    if (req.expect === 'reject') return status >= 200 && status < 300 ? `accepted (${status}) a body that must be refused` : undefined;
    const target = targetOf(req.path);
    let wanted: number | undefined;
    if (req.method === 'POST' && target.route === 'create') wanted = 201;
    if (req.method === 'PUT' && target.route === 'item') wanted = this.books.has(target.id) ? 200 : 404;
    return wanted === undefined || wanted === status ? undefined : `answered ${status} to a valid body, expected ${wanted}`;
  }

  /** Applies the answer to the model; returns what is wrong with it, if anything. */
  apply(req: FuzzRequest, answer: Answer, data: unknown): string | undefined {
    const target = targetOf(req.path);
    const { status } = answer;
    const method = req.method;
    if (status === 404 && target.route === 'item' && this.books.has(target.id) && /^(GET|HEAD|PUT|DELETE)$/.test(method)) {
      if (answer.json?.message === 'Book not found' || method === 'HEAD') return `404 for book ${target.id}, which exists`;
    }
    if (status < 200 || status > 299) return undefined;
    if (method === 'POST' && target.route === 'create') {
      const problem = bookProblem(data);
      if (problem !== undefined) return problem;
      const book = data as Book;
      if (status !== 201 || book.id <= this.highestId) return `create answered ${status} with id ${book.id} (highest so far ${this.highestId})`;
      this.highestId = book.id;
      this.books.set(book.id, book);
      this.acknowledged.created++;
      return undefined;
    }
    if (target.route === 'item' && (method === 'PUT' || method === 'DELETE')) {
      if (!this.books.has(target.id)) return `${method} of book ${target.id} succeeded but the book does not exist`;
      if (method === 'DELETE') {
        this.books.delete(target.id);
        this.acknowledged.deleted++;
        return data === null ? undefined : 'DELETE answered data other than null';
      }
      const problem = bookProblem(data) ?? ((data as Book).id === target.id ? undefined : 'PUT answered another book');
      if (problem !== undefined) return problem;
      this.books.set(target.id, data as Book);
      this.acknowledged.updated++;
      return undefined;
    }
    if (method === 'GET' && target.route === 'item') return sameJson(data, this.books.get(target.id), `book ${target.id}`);
    if (method === 'GET' && target.route === 'list') return sameJson(data, this.list(), 'the list');
    if (method === 'GET' || method === 'HEAD' || (method === 'POST' && req.path.startsWith('/token'))) return undefined;
    return `unexpected ${status} for ${method} ${req.path}`;
  }
}

export function sameJson(actual: unknown, expected: unknown, what: string): string | undefined {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  return a === e ? undefined : `${what} differs from the model: served ${a.slice(0, 300)}, expected ${e.slice(0, 300)}`;
}
