import { COMPRESSION_LEVEL, crc32Combine, deflateSegment, GZIP_HEADER, GZIP_TRAILER_BYTES, gzipTrailer, type Segment } from '../compression/gzip-member.ts';
import type { Answer } from '../http/messages.ts';
import type { PiecewiseBody, BodyPiece, StreamSending } from '../http/route.ts';
import type { MemoryBudget } from '../memory/budget.ts';
import type { ListSnapshot, PageText } from '../store/book-index.ts';
import type { DeflatedText } from '../store/list-readers.ts';
import { chargedWalk } from './charged-walk.ts';
import { listHead, pieceEnd, SHED } from './list-body.ts';

/** What surrounds the pages in a compressed list, compressed once per envelope head. */
interface Framing {
  /** The gzip header and the envelope up to the first book. */
  readonly opening: Buffer;
  readonly head: Segment;
  readonly comma: Segment;
  /** `]}`, closing the deflate stream. */
  readonly closing: Segment;
}

const framings = new Map<string, Framing>();

function framingOf(head: string): Framing {
  let framing = framings.get(head);
  if (framing === undefined) {
    const segment = deflateSegment(Buffer.from(head, 'utf8'), COMPRESSION_LEVEL, false);
    framing = {
      opening: Buffer.concat([GZIP_HEADER, segment.deflated]),
      head: segment,
      comma: deflateSegment(Buffer.from(','), COMPRESSION_LEVEL, false),
      closing: deflateSegment(Buffer.from(']}'), COMPRESSION_LEVEL, true),
    };
    framings.set(head, framing);
  }
  return framing;
}

/**
 * GET /books as a PiecewiseBody gzip-encoded (docs/contract.md, "Compression"): the same text as
 * `listBody`, in one gzip member whose deflate stream is the page texts' pieces compressed each
 * on its own (compression/gzip-member.ts). A piece is compressed the first time a list sends it and
 * kept beside its page text while the page is current (PageText.deflated), so a list of a state
 * whose pages were all sent before costs no compression at all: writing the kept bytes, and one
 * CRC-32 combination per piece. Compressing as it goes, a list pays for it a piece at a time, in
 * the turns its reader's pace gives it (each piece counts its text's bytes against the sender's
 * turn budget, http/piecewise-body.ts), and a list whose reader stops compresses nothing more.
 *
 * Its length is known once every page of the state has been compressed: until then it is sent
 * chunked. Its pieces' `bytes` are those of the text they carry, so its progress (the floor, the
 * memory budget's rate) counts as an uncompressed list's does. It walks the snapshot as
 * `listBody` does: charged for the superseded pages it has still to send, their gzip forms too.
 */
export function compressedListBody(answer: Answer, snapshot: ListSnapshot, budget: MemoryBudget): PiecewiseBody {
  const head = listHead(answer);
  const framing = framingOf(head);
  return {
    length: knownLength(framing, snapshot.pages),
    size: framing.head.size - 1 + snapshot.bytes + 1,
    chunks: (sending) => pieces(framing, snapshot, budget, sending),
  };
}

function knownLength(framing: Framing, pages: readonly PageText[]): number | undefined {
  let length = framing.opening.length + framing.closing.deflated.length + GZIP_TRAILER_BYTES + Math.max(pages.length - 1, 0) * framing.comma.deflated.length;
  for (const page of pages) {
    if (page.deflated === undefined || page.deflated.missing > 0) return undefined;
    length += page.deflated.bytes;
  }
  return length;
}

function* pieces(framing: Framing, snapshot: ListSnapshot, budget: MemoryBudget, sending: StreamSending): Generator<BodyPiece> {
  const { head, comma, closing } = framing;
  let crc = head.crc;
  let size = head.size;
  const walk = chargedWalk(budget, snapshot, sending.sent, () => sending.cut(SHED));
  try {
    yield { text: framing.opening, bytes: head.size };
    const { pages } = snapshot;
    for (let p = 0; p < pages.length; p++) {
      const page = pages[p] as PageText;
      // The comma before a page goes out with its first piece rather than as a write of its own.
      let before = p === 0 ? undefined : comma;
      for (let from = 0, slice = 0; from < page.text.length; slice++) {
        const to = pieceEnd(page.text, from);
        const segment = page.deflated?.slices[slice] ?? compress(page, slice, from, to);
        from = to;
        if (before !== undefined) {
          crc = crc32Combine(crc, before.crc, before.size);
          size += before.size;
        }
        crc = crc32Combine(crc, segment.crc, segment.size);
        size += segment.size;
        yield before === undefined
          ? { text: segment.deflated, bytes: segment.size }
          : { text: Buffer.concat([before.deflated, segment.deflated]), bytes: before.size + segment.size };
        before = undefined;
      }
      // Resumed for the next piece: this page's last has been taken to be written.
      walk.passed();
    }
  } finally {
    walk.close();
  }
  crc = crc32Combine(crc, closing.crc, closing.size);
  size += closing.size;
  yield { text: Buffer.concat([closing.deflated, gzipTrailer(crc, size)]), bytes: closing.size };
}

/**
 * Compresses one piece of a page's text, and keeps it beside the page while the page is current:
 * the next list to send this page version, this one's or any other's, sends it as it is. A
 * superseded page's piece is this list's alone (what the memory budget counted for the page when
 * it was superseded is all the page holds).
 */
function compress(page: PageText, slice: number, from: number, to: number): Segment {
  const segment = deflateSegment(Buffer.from(page.text.slice(from, to), 'utf8'), COMPRESSION_LEVEL, false);
  if (!page.superseded) {
    const deflated = (page.deflated ??= emptyDeflated(page.text));
    if (deflated.slices[slice] === undefined) {
      deflated.slices[slice] = segment;
      deflated.missing--;
      deflated.bytes += segment.deflated.length;
    }
  }
  return segment;
}

function emptyDeflated(text: string): DeflatedText {
  let count = 0;
  for (let from = 0; from < text.length; from = pieceEnd(text, from)) count++;
  return { slices: new Array<Segment | undefined>(count).fill(undefined), missing: count, bytes: 0 };
}
