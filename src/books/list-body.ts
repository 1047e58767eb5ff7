import type { Answer } from '../http/messages.ts';
import { envelopeHead } from '../http/respond.ts';
import type { StreamedBody } from '../http/route.ts';
import type { ListSnapshot, PageText } from '../store/book-index.ts';

/** UTF-16 units per piece written: a stalled reader's socket holds about this much of its answer. */
const PIECE = 1 << 16;

/**
 * GET /books as a StreamedBody: the envelope, then `[`, every page's text with commas between,
 * `]}`. The same bytes as the envelope built around `listJson()`, never joined into one string.
 */
export function listBody({ status, message }: Answer, snapshot: ListSnapshot): StreamedBody {
  const head = `${envelopeHead(status, message)}[`;
  return {
    length: Buffer.byteLength(head) - 1 + snapshot.bytes + 1,
    chunks: () => pieces(head, snapshot),
  };
}

function* pieces(head: string, snapshot: ListSnapshot): Generator<string> {
  // Each piece carries what surrounds it (the head, a comma, the closing `]}`) instead of being a
  // tiny write of its own: a list of one page is one piece.
  const { pages } = snapshot;
  let before = head;
  for (let p = 0; p < pages.length; p++) {
    const { text } = pages[p] as PageText;
    for (let from = 0; from < text.length; ) {
      let to = Math.min(from + PIECE, text.length);
      // A piece must not end between the halves of a surrogate pair: each is encoded on its own.
      if (to < text.length && isHighSurrogate(text.charCodeAt(to - 1))) to++;
      const last = to === text.length && p === pages.length - 1;
      yield before + text.slice(from, to) + (last ? ']}' : '');
      before = '';
      from = to;
    }
    before = ',';
  }
  if (pages.length === 0) yield `${head}]}`;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
