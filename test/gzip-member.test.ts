import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { crc32, gunzipSync } from 'node:zlib';
import { COMPRESSION_LEVEL, crc32Combine, deflateSegment, GZIP_HEADER, gzipTrailer } from '../src/compression/gzip-member.ts';

describe('one gzip member from deflate segments made apart (compression/gzip-member.ts)', () => {
  it('crc32Combine gives the CRC-32 of A followed by B from their CRCs and B\'s length, whatever the lengths', () => {
    for (const [a, b] of [[0, 0], [0, 5], [7, 0], [1, 1], [100, 65_536], [65_537, 3], [1_000_000, 999_983]] as const) {
      const first = randomBytes(a);
      const second = randomBytes(b);
      assert.equal(crc32Combine(crc32(first), crc32(second), b), crc32(Buffer.concat([first, second])), `${a} + ${b} bytes`);
    }
  });

  it('segments compressed apart, framed by the header and the trailer of their combined CRC and length, are the whole body gzip-encoded', () => {
    const pieces = [Buffer.from('{"data":['), randomBytes(40_000), Buffer.from('x'.repeat(70_000)), Buffer.alloc(0), Buffer.from(']}')];
    const segments = pieces.map((piece, i) => deflateSegment(piece, COMPRESSION_LEVEL, i === pieces.length - 1));
    let crc = 0;
    let size = 0;
    for (const segment of segments) {
      crc = crc32Combine(crc, segment.crc, segment.size);
      size += segment.size;
    }
    const member = Buffer.concat([GZIP_HEADER, ...segments.map((s) => s.deflated), gzipTrailer(crc, size)]);
    assert.ok(gunzipSync(member).equals(Buffer.concat(pieces)));
    // Each segment's bytes are its own: not a view of a larger buffer zlib keeps. A copy under half
    // Buffer.poolSize sits in Node's shared pool (a slab of about poolSize, which differs between Node
    // lines); a larger one has a buffer of exactly its length.
    for (const { deflated } of segments) {
      const pooled = deflated.length < Buffer.poolSize >>> 1;
      const own = pooled ? deflated.buffer.byteLength < 2 * Buffer.poolSize : deflated.buffer.byteLength === deflated.length;
      assert.ok(own, `a segment of ${deflated.length} bytes holds a buffer of ${deflated.buffer.byteLength}`);
    }
  });
});
