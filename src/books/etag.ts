import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
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
 * http/preconditions.ts). undefined: neither header, an unconditional write.
 */
export function writeCondition({ method, headers }: IncomingMessage): VersionCondition | undefined {
  if (!hasPreconditions(headers)) return undefined;
  return (currentJson) => evaluatePreconditions(method as string, headers, bookEtag(currentJson)) === 'proceed';
}
