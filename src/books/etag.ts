import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { gzipTag } from '../http/content-coding.ts';
import { evaluatePreconditions, hasPreconditions } from '../http/preconditions.ts';
import type { VersionCondition } from '../store/book-store.ts';

/**
 * A strong entity tag (RFC 9110 §8.8.3) for a book: a hash of its response JSON, so two answers
 * carry the same tag exactly when they carry the same bytes, across restarts too.
 */
export function bookEtag(json: string): string {
  return `"${hash('sha256', json, 'base64url')}"`;
}

/** Books whose tag a cache keeps at most, and the longest JSON it keeps one for: about 2 MiB held at most. */
export const ETAG_CACHE_BOOKS = 1024;
export const ETAG_CACHE_MAX_JSON = 1024;

/**
 * The tags of books read lately, so a book read again costs a comparison of its JSON instead of a
 * SHA-256 (docs/performance.md, "Where the microseconds go"): the tag is a function of the JSON, so
 * an entry holds for exactly as long as the book's JSON is the one it was made for. Bounded: when
 * full, the entry made first goes. An entry keeps its own copy of the JSON: the store's is a slice
 * of a page of 1024 books, which the entry would otherwise keep alive after the page is rebuilt.
 */
export class BookEtags {
  readonly #entries = new Map<number, { readonly json: string; readonly etag: string }>();

  etag(id: number, json: string): string {
    const known = this.#entries.get(id);
    if (known !== undefined && known.json === json) return known.etag;
    const etag = bookEtag(json);
    if (json.length <= ETAG_CACHE_MAX_JSON) {
      if (known === undefined && this.#entries.size >= ETAG_CACHE_BOOKS) this.#entries.delete(this.#entries.keys().next().value as number);
      this.#entries.set(id, { json: Buffer.from(json, 'utf16le').toString('utf16le'), etag });
    }
    return etag;
  }

  get size(): number {
    return this.#entries.size;
  }
}

/**
 * A write's preconditions (If-Match, If-None-Match) as the store's condition on the book's current
 * version, so they are evaluated against exactly the state the write replaces (RFC 9110 §13.2.2,
 * http/preconditions.ts). undefined: neither header, an unconditional write. A book of 1 KiB or
 * more is sent gzip-encoded to a client that takes it, under its gzip form's tag: that tag names
 * the book too (docs/contract.md, "Compression").
 */
export function writeCondition({ method, headers }: IncomingMessage): VersionCondition | undefined {
  if (!hasPreconditions(headers)) return undefined;
  return (currentJson) => {
    const etag = bookEtag(currentJson);
    return evaluatePreconditions(method as string, headers, etag, gzipTag(etag)) === 'proceed';
  };
}
