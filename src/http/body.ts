import type { IncomingMessage } from 'node:http';
import { sendContinue } from './continue.ts';
import { refusal, type AnswerName, type HttpError } from './messages.ts';
import { strictUtf8Decoder } from './utf8.ts';

/** docs/contract.md, "Bodies": request bodies over 64 KiB are refused. */
export const BODY_LIMIT = 64 * 1024;

const TOO_LARGE = (): HttpError => refusal('payloadTooLarge', { connection: 'close' });

/** The client went away before its body arrived; there is nobody to answer. */
export class ClientAbortedError extends Error {
  constructor() {
    super('client closed the connection before the request body was complete');
    this.name = 'ClientAbortedError';
  }
}

/**
 * Reads the whole body and resolves with what `take` makes of it: refused by Content-Length
 * before a byte is read, then counted while reading (chunked bodies carry no length). Over the
 * limit the answer carries `Connection: close` so Node does not keep draining an unbounded upload.
 *
 * Taken at 'end', never sooner (at its last declared byte, or from the request's buffer before
 * the request is complete): those moments come from within the parser's pass over a read, and
 * callbacks queued then run before the parser reaches what follows, so the answer could leave
 * before a parse error in those bytes (garbage after a short Content-Length) was seen, and that
 * error would then get an answer of its own after it, where it must make this answer the
 * connection's last (`npm run fuzz`). 'end' comes once the parser is done with the read.
 */
function readBody<T>(req: IncomingMessage, take: (bytes: Buffer) => T): Promise<T> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > BODY_LIMIT) return Promise.reject(TOO_LARGE());
  sendContinue(req);
  // Gone already: no event is left to wait for.
  if (req.destroyed) return Promise.reject(new ClientAbortedError());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        cleanup();
        reject(TOO_LARGE());
        return;
      }
      chunks.push(chunk);
    };
    // What the caller makes of the bytes is made here, in the same turn: no second promise to wait on.
    const onEnd = (): void => {
      cleanup();
      try {
        resolve(take(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
      } catch (err) {
        reject(err);
      }
    };
    const onAbort = (): void => {
      cleanup();
      reject(new ClientAbortedError());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

const utf8 = strictUtf8Decoder();

/** Bodies up to this long are looked at for the ASCII path below; past it, one decoder call costs little beside them. */
const ASCII_PATH_BYTES = 4096;

/**
 * The body as text by the strict rule (utf8.ts). A short ASCII body (a login, a book) is its own
 * text, one character per byte, read as latin1 without a call into the strict decoder: ASCII is
 * UTF-8 as it is, so the rule refuses none of it and the text is the same. latin1, not
 * `String.fromCharCode.apply`, which first spreads the bytes into an argument list
 * (docs/performance.md, "Where the microseconds go").
 */
function bodyText(bytes: Buffer): string {
  if (bytes.length > ASCII_PATH_BYTES) return utf8.decode(bytes);
  for (let i = 0; i < bytes.length; i++) if ((bytes[i] as number) > 0x7f) return utf8.decode(bytes);
  return bytes.toString('latin1');
}

/**
 * Strict UTF-8, then JSON, then a plain object: anything else is the endpoint's own 400 message.
 * Keys such as `__proto__` become own properties (JSON.parse semantics) and are never merged.
 */
function parseJsonObject(bytes: Buffer, invalid: InvalidBody): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bodyText(bytes));
  } catch {
    throw refusal(invalid);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw refusal(invalid);
  return value as Record<string, unknown>;
}

/** The 400 each endpoint answers a body that is not a JSON object with (docs/contract.md, "Bodies"). */
export type InvalidBody = Extract<AnswerName, 'invalidInput' | 'invalidRequestPayload'>;

export function readJsonObject(req: IncomingMessage, invalid: InvalidBody): Promise<Record<string, unknown>> {
  return readBody(req, (bytes) => parseJsonObject(bytes, invalid));
}
