import { readJsonObject } from '../http/body.ts';
import { isJsonMediaType } from '../http/media-type.ts';
import { ANSWERS, refusal } from '../http/messages.ts';
import { answer, jsonBody, NO_ROUTE, NULL, ref, TOO_LARGE, TRANSPORT, WWW_AUTHENTICATE } from '../http/openapi-operations.ts';
import type { Schema } from '../http/openapi-types.ts';
import { encodedReply } from '../http/respond.ts';
import { defineRoute, type Reply } from '../http/route.ts';
import type { Logger } from '../log.ts';
import { BEARER_CHALLENGE } from './authorize.ts';
import { createCredentialCheck } from './credentials.ts';
import { signToken } from './jwt.ts';
import type { SigningKeys } from './keys.ts';
import { SERVICE_WIDE_FACTOR, withServiceWideBound } from './service-wide-throttle.ts';
import { createLoginThrottle } from './throttle.ts';

/** A 401 carries a challenge (RFC 9110 §11.6.1): the credentials this service accepts are its Bearer tokens. */
const INVALID_CREDENTIALS_HEADERS = { 'www-authenticate': BEARER_CHALLENGE } as const;

/** What POST /token needs, built once per app. */
export interface TokenRouteDeps {
  readonly username: string;
  readonly password: string;
  readonly keys: SigningKeys;
  /**
   * Failed logins per client address per 15 minutes before 429; ten times as many from all
   * addresses together stop every login for the rest of that window. 0 disables both.
   */
  readonly loginMaxFailures: number;
  /** Clock in milliseconds. */
  readonly now: () => number;
  readonly logger: Logger;
  /** Told of every 401 Invalid credentials and every 429 (metrics). */
  readonly onLoginFailed?: (() => void) | undefined;
  readonly onThrottled?: (() => void) | undefined;
}

/** The schemas POST /token's operation refers to. */
export const TOKEN_SCHEMAS: Readonly<Record<string, Schema>> = {
  LoginRequest: { type: 'object', required: ['username', 'password'], properties: { username: { type: 'string' }, password: { type: 'string' } } },
  Token: { type: 'object', required: ['token'], properties: { token: { type: 'string', description: 'HS256 JWT; exp is 900 s after iat.' } } },
};

/** POST /token (docs/contract.md, "Logins" and "Login throttling"). */
export const TOKEN_ROUTE = defineRoute({
  method: 'POST',
  pattern: '/token',
  pathName: 'token',
  auth: false,
  operation: {
    operationId: 'createToken',
    summary: 'Exchange the credential pair for a 15-minute HS256 JWT',
    tags: ['auth'],
    security: [],
    requestBody: jsonBody('Parsed as JSON whatever the Content-Type.', ref('LoginRequest')),
    responses: {
      '200': answer(200, [ANSWERS.tokenGenerated.message], ref('Token')),
      '400': answer(400, [ANSWERS.invalidRequestPayload.message, ANSWERS.badRequest.message]),
      '401': answer(401, [ANSWERS.invalidCredentials.message], NULL, { 'WWW-Authenticate': WWW_AUTHENTICATE }),
      '413': TOO_LARGE,
      '429': answer(429, [ANSWERS.tooManyLoginAttempts.message], NULL, {
        'Retry-After': { description: 'Seconds until this address may try again.', required: true, schema: { type: 'integer', minimum: 1 } },
      }),
      ...TRANSPORT,
      ...NO_ROUTE,
      '500': answer(500, [ANSWERS.couldNotGenerateToken.message, ANSWERS.internalError.message]),
    },
  },
  handler(deps: TokenRouteDeps) {
    const matches = createCredentialCheck(deps.username, deps.password);
    const max = deps.loginMaxFailures;
    const throttle = withServiceWideBound(createLoginThrottle(max, deps.now), max * SERVICE_WIDE_FACTOR, deps.now);
    const { keys, now, logger, onLoginFailed, onThrottled } = deps;
    // A token is a pure function of (subject, iat), and only the configured subject logs in: the
    // answer made this second, encoded once, answers every login this second, so a login burst
    // costs one HMAC a second.
    let issued: { iat: number; reply: Reply } | undefined;
    const refuseWhileThrottled = (clientAddress: string): void => {
      const wait = throttle.retryAfter(clientAddress);
      if (wait > 0) {
        onThrottled?.();
        throw refusal('tooManyLoginAttempts', { 'retry-after': String(wait) });
      }
    };
    return async ({ req }): Promise<Reply> => {
      const clientAddress = req.socket.remoteAddress ?? '';
      refuseWhileThrottled(clientAddress);
      const body = await readJsonObject(req, 'invalidRequestPayload');
      // Only JSON: a page on another origin cannot send it without a CORS preflight (docs/contract.md,
      // "Logins"). Checked after the body is read, so an oversized one is still 413 first.
      if (!isJsonMediaType(req.headers['content-type'])) throw refusal('invalidRequestPayload');
      const { username, password } = body;
      if (typeof username !== 'string' || typeof password !== 'string') throw refusal('invalidRequestPayload');
      // Again, with nothing awaited between this check, the comparison and the count: logins whose
      // headers all passed the check above before any body came must not each get a guess.
      refuseWhileThrottled(clientAddress);
      if (!matches(username, password)) {
        throttle.recordFailure(clientAddress);
        onLoginFailed?.();
        throw refusal('invalidCredentials', INVALID_CREDENTIALS_HEADERS);
      }
      const iat = Math.floor(now() / 1000);
      if (issued?.iat !== iat) {
        let token: string;
        try {
          token = signToken(username, keys.signing, iat);
        } catch (err) {
          logger.error('token signing failed', { err: err as Error });
          throw refusal('couldNotGenerateToken');
        }
        issued = { iat, reply: encodedReply(ANSWERS.tokenGenerated, `{"token":${JSON.stringify(token)}}`) };
      }
      return issued.reply;
    };
  },
});
