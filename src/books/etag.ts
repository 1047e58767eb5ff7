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
