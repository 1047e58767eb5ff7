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
 * Reads the whole body: refused by Content-Length before a byte is read, then counted while
 * reading (chunked bodies carry no length). Over the limit the answer carries `Connection: close`
 * so Node does not keep draining an unbounded upload.
 *
 * Looked at a turn later: a small body mostly comes in the read that brought its headers, and
 * Node's parser frames all of that read before the turn ends, so the body is then in the
 * request's buffer, every declared byte of it, and is taken with one `read()`, without a
 * listener, flowing mode or 'end' (docs/performance.md, "Where the microseconds go"). Otherwise
 * it is read as it comes.
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > BODY_LIMIT) return Promise.reject(TOO_LARGE());
  // A Transfer-Encoding frames the body instead (a server with insecureHTTPParser lets both through).
  const length = declared === undefined || req.headers['transfer-encoding'] !== undefined ? -1 : Number(declared);
  sendContinue(req);
  return NEXT_TURN.then(() => (req.complete || req.readableLength === length ? bufferedBody(req) : arrivingBody(req, length)));
}

const NEXT_TURN = Promise.resolve();
const EMPTY = Buffer.alloc(0);

/** A body Node's parser has framed whole (the request is complete, or its declared length is buffered). */
function bufferedBody(req: IncomingMessage): Buffer {
  const size = req.readableLength;
  if (size > BODY_LIMIT) throw TOO_LARGE();
  return size === 0 ? EMPTY : (req.read() as Buffer);
}

/**
 * A body still arriving (`length` declared, or -1). One with a Content-Length is whole at its last declared byte: Node's
 * parser framed it (anything after is the next request), so it is taken then rather than one tick
 * later at 'end'.
 */
function arrivingBody(req: IncomingMessage, length: number): Promise<Buffer> {
  // Gone before the turn came: no event is left to wait for.
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
      if (size === length) onEnd();
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
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

/**
 * Strict UTF-8, then JSON, then a plain object: anything else is the endpoint's own 400 message.
 * Keys such as `__proto__` become own properties (JSON.parse semantics) and are never merged.
 */
function parseJsonObject(bytes: Uint8Array, invalid: InvalidBody): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    throw refusal(invalid);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw refusal(invalid);
  return value as Record<string, unknown>;
}

/** The 400 each endpoint answers a body that is not a JSON object with (docs/contract.md, "Bodies"). */
export type InvalidBody = Extract<AnswerName, 'invalidInput' | 'invalidRequestPayload'>;

export function readJsonObject(req: IncomingMessage, invalid: InvalidBody): Promise<Record<string, unknown>> {
  return readBody(req).then((bytes) => parseJsonObject(bytes, invalid));
}
