import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gzip, gzipSync, type ZlibOptions } from 'node:zlib';
import { acceptsGzip } from './accept-encoding.ts';
import { COMPRESSION_LEVEL, DOCUMENT_COMPRESSION_LEVEL } from '../compression/gzip-member.ts';
import { addVary } from './header-value.ts';
import { envelopeText } from './respond.ts';
import type { DocumentReply, EnvelopeReply, Reply, PiecewiseBody } from './route.ts';

/**
 * Answers shorter than this (UTF-16 units of an envelope's `data`, bytes or units of a document)
 * are sent as they are, whatever the request accepts: under 1 KiB an answer with its headers
 * already fits one TCP segment (MSS 1460), so compressing it saves no packet and no round trip,
 * for zlib's setup on every call, a good part of what answering it costs. A book (about 135
 * bytes, which gzip leaves at 132), an error, a token, /healthz are all below it.
 */
const MIN_COMPRESSED_LENGTH = 1024;
/**
 * A body made for one answer (a page of books, of changes) at most this long, in UTF-16 units, is
 * compressed in its request's own turn (under 1 ms at level 1); a longer one on zlib's thread
 * pool, so that no answer holds the event loop while it compresses.
 */
const IN_TURN_LENGTH = 1 << 16;

const FAST: ZlibOptions = { level: COMPRESSION_LEVEL };
const BEST: ZlibOptions = { level: DOCUMENT_COMPRESSION_LEVEL };
const VARY = 'Accept-Encoding';
const gzipOnPool = promisify(gzip);

type Headers = Readonly<Record<string, string>>;
/** A reply that has a body to encode. */
type BodyReply = EnvelopeReply | DocumentReply;

/** A reply made ahead and sent many times, as each coding sends it. */
interface Variants {
  readonly identity: Reply;
  readonly gzipHeaders: Headers;
  /** Compressed on the first request that takes it (a streamed list: once its length is known). */
  gzip: Reply | undefined;
}

/** Keyed by the replies routes keep (the OpenAPI document, the page's files, a list per committed state): they go with them. */
const madeAhead = new WeakMap<Reply, Variants>();

/**
 * The reply as the request's `Accept-Encoding` has it sent (docs/contract.md, "Compression"):
 * gzip-encoded when the request takes gzip and the answer is a 200 of MIN_COMPRESSED_LENGTH or
 * more, with `Content-Encoding: gzip` and its ETag marked as the gzip form's (`"…-gzip"`, RFC 9110
 * §8.8.3: another representation, another tag); and with `Vary: Accept-Encoding` in either coding
 * whenever the answer is that long, so a cache keeps the two apart. A reply made ahead (the
 * OpenAPI document, the page's files, a list of one committed state) is compressed once and its
 * variants kept with it. A request without Accept-Encoding costs a header read, plus, for a long
 * reply made for it alone, the copy of its headers that adds Vary. GET /events (a stream of
 * frames, sent no-transform) is never compressed.
 */
export function encodeReply(req: IncomingMessage, reply: Reply): Reply | Promise<Reply> {
  if (reply.status !== 200 || 'stream' in reply) return reply;
  if (reply.message === undefined) {
    const { body } = reply;
    if (body.length < MIN_COMPRESSED_LENGTH) return reply;
    return typeof body === 'string' ? forOneAnswer(req, reply, body) : madeAheadBuffer(req, reply, body, BEST);
  }
  const { body } = reply;
  if (body === undefined) return reply.data.length < MIN_COMPRESSED_LENGTH ? reply : forOneAnswer(req, reply, undefined);
  if (Buffer.isBuffer(body)) return body.length < MIN_COMPRESSED_LENGTH ? reply : madeAheadBuffer(req, reply, body, FAST);
  return madeAheadStream(req, reply, body);
}

/** The entity tag of a representation's gzip form: the same opaque tag with `-gzip` inside the quotes (weak stays weak). */
export function gzipTag(etag: string): string {
  return `${etag.slice(0, -1)}-gzip"`;
}

function takesGzip(req: IncomingMessage): boolean {
  const accept = req.headers['accept-encoding'];
  return accept !== undefined && acceptsGzip(accept);
}

/** A body made for this answer alone: `text` is the document's, or undefined for an envelope's, built only when it is compressed. */
function forOneAnswer(req: IncomingMessage, reply: BodyReply, text: string | undefined): Reply | Promise<Reply> {
  if (!takesGzip(req)) return withHeaders(reply, varied(reply.headers), reply.body);
  const headers = gzipHeaders(reply.headers);
  const plain = text ?? envelopeText(reply.status, reply.message as string, (reply as EnvelopeReply).data);
  if (plain.length <= IN_TURN_LENGTH) return withHeaders(reply, headers, gzipSync(plain, FAST));
  return gzipOnPool(plain, FAST).then((bytes) => withHeaders(reply, headers, bytes));
}

function madeAheadBuffer(req: IncomingMessage, reply: BodyReply, body: Buffer, options: ZlibOptions): Reply {
  const variants = variantsOf(reply);
  if (!takesGzip(req)) return variants.identity;
  return (variants.gzip ??= withHeaders(reply, variants.gzipHeaders, gzipSync(body, options)));
}

/**
 * A streamed list: its gzip form is known in length, and kept, once every page it shows has been
 * compressed (books/compressed-list-body.ts); until then each request gets one of its own, sent chunked.
 */
function madeAheadStream(req: IncomingMessage, reply: EnvelopeReply, body: PiecewiseBody): Reply {
  if (body.gzip === undefined) return reply;
  const variants = variantsOf(reply);
  if (!takesGzip(req)) return variants.identity;
  if (variants.gzip !== undefined) return variants.gzip;
  const encoded = body.gzip();
  const answer = withHeaders(reply, variants.gzipHeaders, encoded);
  if (encoded.length !== undefined) variants.gzip = answer;
  return answer;
}

function variantsOf(reply: BodyReply): Variants {
  let variants = madeAhead.get(reply);
  if (variants === undefined) {
    variants = { identity: withHeaders(reply, varied(reply.headers), reply.body), gzipHeaders: gzipHeaders(reply.headers), gzip: undefined };
    madeAhead.set(reply, variants);
  }
  return variants;
}

function varied(headers: Headers | undefined): Record<string, string> {
  return Object.assign({}, headers, { vary: addVary(headers?.vary, VARY) });
}

function gzipHeaders(headers: Headers | undefined): Headers {
  const encoded = varied(headers);
  encoded['content-encoding'] = 'gzip';
  if (headers?.etag !== undefined) encoded.etag = gzipTag(headers.etag);
  return encoded;
}

/** The reply with other headers and body, built property by property as envelopeReply does (respond.ts). */
function withHeaders(reply: BodyReply, headers: Headers, body: Buffer | string | PiecewiseBody | undefined): Reply {
  if (reply.message === undefined) return { status: 200, body: body as Buffer | string, headers };
  const { status, message, data } = reply;
  return (body === undefined ? { status, message, data, headers } : { status, message, data, body, headers }) as EnvelopeReply;
}
