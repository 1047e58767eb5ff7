import { hash } from 'node:crypto';
import { entityTagListMatches } from '../http/entity-tags.ts';

/**
 * A strong entity tag (RFC 9110 §8.8.3) for a book: a hash of its response JSON, so two answers
 * carry the same tag exactly when they carry the same bytes, across restarts too.
 */
export function bookEtag(json: string): string {
  return `"${hash('sha256', json, 'base64url')}"`;
}

/**
 * RFC 9110 §13.1.1: `*` matches any current book; otherwise a comma-separated list of entity tags
 * compared strongly, so a weak tag (`W/"…"`) never matches.
 */
export function ifMatchHolds(header: string, currentJson: string): boolean {
  return entityTagListMatches(header, bookEtag(currentJson), 'strong');
}
