import type { Answer } from '../http/messages.ts';
import { envelopeHead } from '../http/respond.ts';
import type { PiecewiseBody, BodyPiece, StreamSending } from '../http/route.ts';
import type { MemoryBudget } from '../memory/budget.ts';
import type { ListSnapshot, PageText } from '../store/book-index.ts';
import { chargedWalk } from './charged-walk.ts';

/** UTF-16 units per piece written: a stalled reader's socket holds about this much of its answer. */
const PIECE = 1 << 16;

export const SHED = 'the memory budget was spent and its list held the most for the slowest reading (list_snapshots)';

/**
 * GET /books as a PiecewiseBody: the envelope, then `[`, every page's text with commas between,
 * `]}`. The same bytes as one envelope around the whole list, never joined into one string.
 * Each answer sent walks the snapshot (chargedWalk): it holds only the pages it has still to send,
 * and is charged for those that writes have superseded meanwhile.
 */
export function listBody(answer: Answer, snapshot: ListSnapshot, budget: MemoryBudget): PiecewiseBody {
  const head = listHead(answer);
  const headBytes = Buffer.byteLength(head);
  const size = headBytes - 1 + snapshot.bytes + 1;
  return {
    length: size,
    size,
    chunks: (sending) => pieces(head, headBytes, snapshot, budget, sending),
  };
}

/** The envelope up to the list's first book: what a streamed list starts with. */
export function listHead({ status, message }: Answer): string {
  return `${envelopeHead(status, message)}[`;
}

/**
 * Where the piece of a page's text starting at `from` ends: PIECE units on, or the text's end, and
 * never between the halves of a surrogate pair (each piece is encoded on its own). Pieces of a page
 * are the same whichever coding sends them: a compressed page is compressed piece by piece.
 */
export function pieceEnd(text: string, from: number): number {
  const to = Math.min(from + PIECE, text.length);
  return to < text.length && isHighSurrogate(text.charCodeAt(to - 1)) ? to + 1 : to;
}

function* pieces(head: string, headBytes: number, snapshot: ListSnapshot, budget: MemoryBudget, sending: StreamSending): Generator<BodyPiece> {
  // Each piece carries what surrounds it (the head, a comma, the closing `]}`) instead of being a
  // tiny write of its own: a list of one page is one piece.
  const { pages } = snapshot;
  if (pages.length === 0) {
    yield { text: `${head}]}`, bytes: headBytes + 2 };
    return;
  }
  const walk = chargedWalk(budget, snapshot, sending.sent, () => sending.cut(SHED));
  try {
    let before = head;
    let beforeBytes = headBytes;
    for (let p = 0; p < pages.length; p++) {
      const { text, bytes } = pages[p] as PageText;
      // The page's bytes, shared out over its pieces by their characters; the last takes the rest.
      let left = bytes;
      for (let from = 0; from < text.length; ) {
        const to = pieceEnd(text, from);
        const share = to === text.length ? left : Math.round(((to - from) * bytes) / text.length);
        left -= share;
        const last = to === text.length && p === pages.length - 1;
        yield { text: before + text.slice(from, to) + (last ? ']}' : ''), bytes: beforeBytes + share + (last ? 2 : 0) };
        before = '';
        beforeBytes = 0;
        from = to;
      }
      // Resumed for the next piece: this page's last has been taken to be written.
      walk.passed();
      before = ',';
      beforeBytes = 1;
    }
  } finally {
    walk.close();
  }
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
