import type { IncomingMessage } from 'node:http';
import { trimOws } from '../http/header-value.ts';
import { ANSWERS } from '../http/messages.ts';
import { queryOf } from '../http/query-params.ts';
import { encodedReply } from '../http/respond.ts';
import type { Reply, RequestContext } from '../http/route.ts';
import type { Logger } from '../log.ts';
import { ticketExpiry, verifyTicket, type TicketKeys } from './event-ticket.ts';
import { TokenError, verifyToken, type TokenFailure } from './jwt.ts';
import type { SigningKeys } from './keys.ts';
import { TokenCache } from './token-cache.ts';

/**
 * `Bearer <token>` (scheme in any case) or the bare token (docs/contract.md, "Authentication"); ''
 * when absent or blank. Only SP and HTAB around it are whitespace (docs/contract.md, "Header values").
 */
function tokenFrom(header: string | undefined): string {
  if (header === undefined) return '';
  const value = trimOws(header);
  if (value.length >= 6 && value.slice(0, 6).toLowerCase() === 'bearer' && (value.length === 6 || value.charCodeAt(6) === 32)) {
    return trimOws(value.slice(6));
  }
  return value;
}

/**
 * The `ticket` query parameter (docs/contract.md, "Event tickets"); '' when absent or empty. Two of
 * them are refused as a token would be: which one would count?
 */
function ticketFrom(url: string): string {
  const tickets = queryOf(url).getAll('ticket');
  if (tickets.length > 1) throw new TokenError('malformed');
  return tickets[0] ?? '';
}

/**
 * RFC 9110 §11.6.1: a 401 MUST carry a challenge. The service takes Bearer tokens (RFC 6750 §3);
 * `error="invalid_token"` when a token was sent and refused.
 */
export const BEARER_CHALLENGE = 'Bearer realm="book-catalogue"';

/* The 401s are the answers an unauthenticated flood gets: encoded once, not per request. */
const TOKEN_REQUIRED = encodedReply(ANSWERS.tokenRequired, 'null', { 'www-authenticate': BEARER_CHALLENGE });
const INVALID_TOKEN = encodedReply(ANSWERS.invalidToken, 'null', { 'www-authenticate': `${BEARER_CHALLENGE}, error="invalid_token"` });

/**
 * Why a 401 was given, as observers (metrics) are told: no token at all, or the verifier's reason
 * folded into a small fixed set, so that a label made of it stays bounded. The log keeps the
 * verifier's own reason. Written out here as in metrics/catalogue-metrics.ts: capabilities do not
 * import each other, and createApp, which hands the metrics' counter to the authorizer, fails to
 * compile should a reason here be one the metrics do not count.
 */
export type TokenRejection = 'missing' | 'malformed' | 'bad_signature' | 'expired' | 'not_yet_valid';

const REJECTION_OF: Readonly<Record<TokenFailure, TokenRejection>> = {
  'too-large': 'malformed',
  malformed: 'malformed',
  'not-base64url': 'malformed',
  'bad-header': 'malformed',
  'alg-not-allowed': 'malformed',
  'crit-present': 'malformed',
  'bad-claims': 'malformed',
  'bad-signature': 'bad_signature',
  expired: 'expired',
  'not-yet-valid': 'not_yet_valid',
};

export interface AuthorizerOptions {
  keys: SigningKeys;
  tickets: TicketKeys;
  nowSeconds: () => number;
  logger: Logger;
  /** Told why each 401 was given (metrics). */
  onRejected?: ((reason: TokenRejection) => void) | undefined;
}

/**
 * undefined when the request may proceed, otherwise its 401 (a reply, not a throw: this is the hot
 * path). `acceptsTicket`: the route takes an event ticket in place of a missing token.
 */
export interface Authorizer {
  (ctx: RequestContext, acceptsTicket: boolean): Reply | undefined;
  /**
   * Whether the request carries a token that verifies now, whatever its route; nothing is logged or
   * counted. For the transport, which lets only such requests be pipelined (SECURITY.md, "Limits").
   */
  hasValidToken(req: IncomingMessage): boolean;
}

/** The Authorization header a connection's last request was let through with, and its token's `exp`. */
interface Accepted {
  header: string;
  exp: number;
}

/** The check for protected routes (docs/contract.md, "Authentication"), with verified tokens cached until they expire. */
export function createAuthorizer({ keys, tickets, nowSeconds, logger, onRejected }: AuthorizerOptions): Authorizer {
  const tokens = new TokenCache((token, at) => verifyToken(token, keys.verifying, at));
  /**
   * Per connection: a client sends the same Authorization header on each of its requests, so the
   * next is compared with the last one accepted (one string comparison) instead of being trimmed,
   * taken apart and looked up in the cache again (docs/performance.md, "Where the microseconds go").
   * It is accepted on the cache's own rule, `exp > now`, so it never lets through a token the cache
   * would refuse. Kept beside the socket, gone with it.
   */
  const accepted = new WeakMap<object, Accepted>();
  const stillAccepted = (socket: object, header: string | undefined): boolean => {
    if (header === undefined) return false;
    const last = accepted.get(socket);
    return last !== undefined && last.header === header && last.exp > nowSeconds();
  };
  const accept = (socket: object, header: string, exp: number): void => {
    const last = accepted.get(socket);
    if (last === undefined) accepted.set(socket, { header, exp });
    else {
      last.header = header;
      last.exp = exp;
    }
  };
  const authorize = (({ req, reqId }, acceptsTicket) => {
    const header = req.headers.authorization;
    if (stillAccepted(req.socket, header)) return undefined;
    const token = tokenFrom(header);
    try {
      if (token !== '') accept(req.socket, header as string, tokens.check(token, nowSeconds()));
      else {
        const ticket = acceptsTicket ? ticketFrom(req.url as string) : '';
        if (ticket === '') {
          onRejected?.('missing');
          return TOKEN_REQUIRED;
        }
        verifyTicket(ticket, tickets, nowSeconds());
      }
      return undefined;
    } catch (err) {
      if (err instanceof TokenError) {
        logger.debug('token rejected', { reqId, reason: err.reason, ...(token === '' && { credential: 'ticket' }) });
        onRejected?.(REJECTION_OF[err.reason]);
        return INVALID_TOKEN;
      }
      throw err;
    }
  }) as Authorizer;
  authorize.hasValidToken = (req) => {
    const header = req.headers.authorization;
    if (stillAccepted(req.socket, header)) return true;
    const token = tokenFrom(header);
    if (token === '') return false;
    try {
      accept(req.socket, header as string, tokens.check(token, nowSeconds()));
      return true;
    } catch {
      // Asked outside any request's error handling: whatever fails, the request is not trusted.
      return false;
    }
  };
  return authorize;
}

/**
 * The `exp` claim of a request's token, or of its event ticket when it came without one, read
 * without verifying it again: only for a request the authorizer has already let through (GET
 * /events ends its stream then; POST /events/ticket gives its ticket the same end).
 */
export function tokenExpiry(req: IncomingMessage): number {
  const token = tokenFrom(req.headers.authorization);
  if (token === '') return ticketExpiry(ticketFrom(req.url as string));
  const payload = token.split('.')[1] as string;
  return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp: number }).exp;
}
