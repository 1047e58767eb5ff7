import type { IncomingHttpHeaders } from 'node:http';
import { entityTagListMatches } from './entity-tags.ts';
import { trimOws } from './header-value.ts';

/** What a request's preconditions make of it (RFC 9110 §13.2.2): go on, 304, or 412. */
export type PreconditionOutcome = 'proceed' | 'not-modified' | 'failed';

/** Whether the request carries a precondition the service evaluates: two header reads, no parsing. */
export function hasPreconditions(headers: IncomingHttpHeaders): boolean {
  return headers['if-match'] !== undefined || headers['if-none-match'] !== undefined;
}

/**
 * The one evaluation of preconditions (docs/contract.md, "Conditional requests"), in the order of
 * RFC 9110 §13.2.2, against the target's current representation, whose entity tag is `etag`
 * (undefined: it has none). Every route with a representation is held to it: reads through the
 * reply writer, writes through the store's condition (books/etag.ts), so a write is decided
 * against exactly the state it replaces.
 *
 * 1. If-Match (strong comparison, §13.1.1) does not hold: 412.
 * 2. If-Unmodified-Since: no representation here has a modification date, so it is ignored.
 * 3. If-None-Match (weak comparison, §13.1.2) matches: 304 for GET and HEAD, 412 otherwise
 *    (`*` matches any current representation: a PUT with it never replaces a book).
 * 4. If-Modified-Since: ignored, as 2.
 *
 * `alsoTagged` is the tag of the target's other current representation, for a write: its gzip
 * form's (http/content-coding.ts), which a client that read it gzip-encoded holds. A read compares the
 * one representation its answer carries.
 */
export function evaluatePreconditions(method: string, headers: IncomingHttpHeaders, etag: string | undefined, alsoTagged?: string): PreconditionOutcome {
  const ifMatch = headers['if-match'];
  if (ifMatch !== undefined && !names(ifMatch, etag, 'strong', alsoTagged)) return 'failed';
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch !== undefined && names(ifNoneMatch, etag, 'weak', alsoTagged)) return method === 'GET' || method === 'HEAD' ? 'not-modified' : 'failed';
  return 'proceed';
}

/** A representation without an entity tag is named by `*` alone. */
function names(header: string, etag: string | undefined, comparison: 'strong' | 'weak', alsoTagged: string | undefined): boolean {
  if (etag === undefined) return trimOws(header) === '*';
  return entityTagListMatches(header, etag, comparison) || (alsoTagged !== undefined && entityTagListMatches(header, alsoTagged, comparison));
}
