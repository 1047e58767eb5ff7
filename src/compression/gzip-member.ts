import { constants, crc32, deflateRawSync } from 'node:zlib';

/**
 * One gzip member (RFC 1952) put together from deflate segments compressed apart. Each segment is
 * raw deflate (RFC 1951) of one piece of the body, made by a compressor of its own and ended by a
 * sync flush: an empty stored block that leaves it byte-aligned and not final, with no reference
 * to anything before it. Segments so made follow one another into one deflate stream, which the
 * last segment (ended by Z_FINISH) closes; the member's header, the segments and its trailer (the
 * CRC-32 of the whole body, combined from the segments' own, and its length) are then the body
 * gzip-encoded, exactly as one compressor would have framed it.
 *
 * One member rather than one per piece, which RFC 1952 also allows: some decoders read a stream's
 * first member and silently drop the rest (`curl --compressed` 7.88 does), so a list sent as one
 * member per page would reach them as its envelope head alone.
 */

/**
 * zlib's fastest level, for what is compressed for one answer or for a state that writes replace:
 * book JSON at about 300 MB/s of CPU to 17% of its size, where the default level 6 gives 13% at
 * about 100 MB/s (`npm run bench:compression`: the 85.3 MB list of 1M books is 14.4 MB).
 */
export const COMPRESSION_LEVEL = constants.Z_BEST_SPEED;
/**
 * For a document made once per process (the OpenAPI document, the page's files), compressed once:
 * the OpenAPI document's 106 KiB are 7.1 KB at this level, 9.4 KB at level 1, for under 1 ms more.
 */
export const DOCUMENT_COMPRESSION_LEVEL = constants.Z_BEST_COMPRESSION;

/** ID1 ID2, CM 8 (deflate), no flags, no modification time, XFL 0, OS 3 (Unix): the header zlib itself writes. */
export const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
/** Bytes of the member's trailer: CRC-32 and ISIZE. */
export const GZIP_TRAILER_BYTES = 8;

/** One piece of a body as raw deflate, with what its member's trailer needs of it. */
export interface Segment {
  readonly deflated: Buffer;
  /** CRC-32 of the piece's bytes. */
  readonly crc: number;
  /** The piece's length in bytes, before compression. */
  readonly size: number;
}

/** Compresses a piece as a segment at `level`; `last` closes the deflate stream (the member's final segment). */
export function deflateSegment(piece: Buffer, level: number, last: boolean): Segment {
  const out = deflateRawSync(piece, { level, finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH });
  // zlib hands back a view of its 16 KiB output buffer: a copy keeps the segment's bytes alone.
  return { deflated: Buffer.from(out), crc: crc32(piece), size: piece.length };
}

/** RFC 1952 §2.3.1: CRC-32 and the body's length modulo 2^32, both little-endian. */
export function gzipTrailer(crc: number, size: number): Buffer {
  const trailer = Buffer.allocUnsafe(GZIP_TRAILER_BYTES);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(size % 2 ** 32, 4);
  return trailer;
}

/** The CRC-32 polynomial, reflected (RFC 1952 §8). */
const POLY = 0xedb88320;

/** a × b modulo the polynomial, both as reflected 32-bit polynomials (zlib's multmodp). */
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = (b & 1) !== 0 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** x^(2^n) modulo the polynomial, for n = 0..31. */
const X2N = new Uint32Array(32);
X2N[0] = 0x40000000;
for (let n = 1; n < 32; n++) X2N[n] = multModP(X2N[n - 1] as number, X2N[n - 1] as number);

/** x^(n × 2^k) modulo the polynomial (zlib's x2nmodp). */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000;
  for (; n > 0; n = Math.floor(n / 2), k++) if (n % 2 === 1) p = multModP(X2N[k & 31] as number, p);
  return p;
}

/**
 * The CRC-32 of A followed by B, from A's CRC, B's CRC and B's length (zlib's crc32_combine):
 * about 20 products of 32-bit polynomials, however long B is, so a cached page's CRC joins its
 * list's without reading the page again.
 */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(x2nModP(lengthB, 3), crcA) ^ crcB) >>> 0;
}
