import { createHmac, timingSafeEqual } from 'node:crypto';
import { TokenError } from './jwt.ts';
import type { SigningKeys } from './keys.ts';

/**
 * Event tickets (docs/contract.md, "Event tickets"): what a browser's EventSource, which cannot send
 * `Authorization`, puts in GET /events' URL instead of the token. A ticket is `<exp>.<mac>`: the
 * token's own `exp` and an HMAC-SHA256 of it. Nothing is stored: a ticket verifies after a restart
 * (an EventSource reconnects to the same URL by itself) and on every process serving one
 * catalogue, and no number of tickets costs memory. It opens the event stream and nothing else,
 * until the token it was made from expires.
 */

/** The MAC key is derived from the signing secret for this purpose alone: no ticket is a token's signature, nor the reverse. */
const PURPOSE = 'book-catalogue event-stream ticket';

/** Decimal exp, a dot, 43 base64url characters: 60 at most; anything longer is refused unread. */
const MAX_TICKET_LENGTH = 64;
const EXP_DIGITS = /^[1-9][0-9]{0,15}$/;

/** The ticket MAC keys of one app, from its signing keys: one that signs, every one that verifies. */
export interface TicketKeys {
  readonly signing: Buffer;
  readonly verifying: readonly Buffer[];
}

function derive(key: Uint8Array): Buffer {
  return createHmac('sha256', key).update(PURPOSE).digest();
}

/**
 * Derived at the first ticket, not when the app is made: an app whose key cannot sign still starts
 * and fails only what needs the key, as POST /token does.
 */
export function ticketKeys(keys: SigningKeys): TicketKeys {
  let signing: Buffer | undefined;
  let verifying: Buffer[] | undefined;
  return {
    get signing() {
      return (signing ??= derive(keys.signing));
    },
    get verifying() {
      return (verifying ??= keys.verifying.map(derive));
    },
  };
}

function mac(key: Buffer, exp: string): string {
  return createHmac('sha256', key).update(exp).digest('base64url');
}

/** A ticket valid until `exp` (Unix seconds), the exp of the token it is issued for. */
export function issueTicket(keys: TicketKeys, exp: number): string {
  const text = String(exp);
  return `${text}.${mac(keys.signing, text)}`;
}

/**
 * Its `exp` when the ticket is one this app's keys made and `exp` > now; otherwise throws a
 * TokenError whose reason is one of the token's own (the log's and the metrics' labels stay as they are).
 */
export function verifyTicket(ticket: string, keys: TicketKeys, nowSeconds: number): number {
  if (ticket.length > MAX_TICKET_LENGTH) throw new TokenError('too-large');
  const dot = ticket.indexOf('.');
  const expText = ticket.slice(0, dot);
  if (dot === -1 || !EXP_DIGITS.test(expText)) throw new TokenError('malformed');
  const given = Buffer.from(ticket.slice(dot + 1), 'latin1');
  let valid = false;
  for (const key of keys.verifying) {
    const expected = Buffer.from(mac(key, expText), 'latin1');
    // timingSafeEqual needs equal lengths; a MAC's length is public knowledge.
    if (given.length === expected.length && timingSafeEqual(given, expected)) valid = true;
  }
  if (!valid) throw new TokenError('bad-signature');
  const exp = Number(expText);
  if (!(exp > nowSeconds)) throw new TokenError('expired');
  return exp;
}

/** The exp of a ticket verifyTicket has accepted, read without verifying it again. */
export function ticketExpiry(ticket: string): number {
  return Number(ticket.slice(0, ticket.indexOf('.')));
}
