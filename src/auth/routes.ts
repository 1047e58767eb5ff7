import { HttpError, MESSAGES } from '../errors.ts';
import { readJsonObject } from '../http/body.ts';
import { isJsonMediaType } from '../http/media-type.ts';
import type { RouteDefinition } from '../http/router.ts';
import type { Reply, Route } from '../http/route.ts';
import type { Logger } from '../log.ts';
import { BEARER_CHALLENGE } from './authorize.ts';
import { createCredentialCheck } from './credentials.ts';
import { signToken } from './jwt.ts';
import type { LoginThrottle } from './throttle.ts';

/** A 401 carries a challenge (RFC 9110 §11.6.1): the credentials this service accepts are its Bearer tokens. */
const INVALID_CREDENTIALS_HEADERS = { 'www-authenticate': BEARER_CHALLENGE } as const;

export interface TokenRouteOptions {
  username: string;
  password: string;
  signingKey: Uint8Array;
  throttle: LoginThrottle;
  nowSeconds: () => number;
  logger: Logger;
  /** Told of every 401 Invalid credentials and every 429 (metrics). */
  onLoginFailed?: (() => void) | undefined;
  onThrottled?: (() => void) | undefined;
}

/** POST /token (docs/contract.md, "Logins" and "Login throttling"). */
export function tokenRoute(options: TokenRouteOptions): RouteDefinition<Route> {
  const matches = createCredentialCheck(options.username, options.password);
  const { throttle, signingKey, nowSeconds, logger, onLoginFailed, onThrottled } = options;
  // A token is a pure function of (subject, iat), and only the configured subject logs in: the one
  // signed this second answers every login this second, so a login burst costs one HMAC a second.
  let issued = { iat: Number.NaN, data: '' };
  return {
    method: 'POST',
    pattern: '/token',
    handler: {
      auth: false,
      async handle({ req, clientAddress }): Promise<Reply> {
        const wait = throttle.retryAfter(clientAddress);
        if (wait > 0) {
          onThrottled?.();
          throw new HttpError(429, MESSAGES.tooManyLoginAttempts, { 'retry-after': String(wait) });
        }
        const body = await readJsonObject(req, MESSAGES.invalidRequestPayload);
        // Only JSON: a page on another origin cannot send it without a CORS preflight (docs/contract.md,
        // "Logins"). Checked after the body is read, so an oversized one is still 413 first.
        if (!isJsonMediaType(req.headers['content-type'])) throw new HttpError(400, MESSAGES.invalidRequestPayload);
        const { username, password } = body;
        if (typeof username !== 'string' || typeof password !== 'string') throw new HttpError(400, MESSAGES.invalidRequestPayload);
        if (!matches(username, password)) {
          throttle.recordFailure(clientAddress);
          onLoginFailed?.();
          throw new HttpError(401, MESSAGES.invalidCredentials, INVALID_CREDENTIALS_HEADERS);
        }
        const iat = Math.floor(nowSeconds());
        if (issued.iat !== iat) {
          let token: string;
          try {
            token = signToken(username, signingKey, iat);
          } catch (err) {
            logger.error('token signing failed', { err: err as Error });
            throw new HttpError(500, MESSAGES.couldNotGenerateToken);
          }
          issued = { iat, data: `{"token":${JSON.stringify(token)}}` };
        }
        return { status: 200, message: MESSAGES.tokenGenerated, data: issued.data };
      },
    },
  };
}
