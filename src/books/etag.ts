import { hash } from 'node:crypto';
import { entityTagListMatches } from '../http/entity-tags.ts';
import type { VersionCondition } from '../store/book-store.ts';

/**
 * A strong entity tag (RFC 9110 §8.8.3) for a book: a hash of its response JSON, so two answers
 * carry the same tag exactly when they carry the same bytes, across restarts too.
 */
export function bookEtag(json: string): string {
  return `"${hash('sha256', json, 'base64url')}"`;
}

/**
 * If-Match as the store's condition on the book's current version (RFC 9110 §13.1.1): `*`
 * matches any current book; otherwise a comma-separated list of entity tags compared strongly, so
 * a weak tag (`W/"…"`) never matches. undefined: no header, an unconditional write.
 */
export function ifMatchCondition(header: string | undefined): VersionCondition | undefined {
  if (header === undefined) return undefined;
  return (currentJson) => entityTagListMatches(header, bookEtag(currentJson), 'strong');
}
