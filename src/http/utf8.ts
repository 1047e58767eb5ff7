import { TextDecoder } from 'node:util';

/**
 * Strict UTF-8: the one rule for bytes the service takes as text, request bodies
 * (docs/contract.md, "Bodies") and the files `import` reads (docs/contract.md, "Durability").
 * WHATWG's fatal decoder refuses every ill-formed sequence (a stray continuation byte, an overlong
 * form, a surrogate, a code point past U+10FFFF, a sequence cut short) instead of replacing it with
 * U+FFFD. ignoreBOM keeps a leading byte-order mark in the text, so JSON.parse refuses it.
 */
export function strictUtf8Decoder(): TextDecoder {
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
}

/** Bytes that are not UTF-8; `offset` is where the first ill-formed sequence starts. */
export class InvalidUtf8Error extends Error {
  readonly offset: number;
  constructor(name: string, offset: number) {
    super(`${name} is not valid UTF-8 at byte ${offset}`);
    this.name = 'InvalidUtf8Error';
    this.offset = offset;
  }
}

function decodes(bytes: Uint8Array): boolean {
  try {
    strictUtf8Decoder().decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Where the first ill-formed sequence of `bytes` starts, `bytes` starting at a character boundary
 * and failing to decode. Asked of the decoder itself, so it cannot disagree with the rule: the
 * longest prefix that still decodes (bytes that may yet complete a character are held back, not
 * refused) ends inside that sequence or right before it, and the text it decodes to ends where it starts.
 */
function firstInvalid(bytes: Uint8Array): number {
  let good = 0;
  let bad = bytes.length;
  while (bad - good > 1) {
    const mid = (good + bad) >>> 1;
    if (decodes(bytes.subarray(0, mid))) good = mid;
    else bad = mid;
  }
  return Buffer.byteLength(strictUtf8Decoder().decode(bytes.subarray(0, good), { stream: true }));
}

/**
 * The text of a stream of bytes, a chunk at a time, by the rule above; a character cut by a chunk
 * boundary is joined. The first ill-formed sequence throws InvalidUtf8Error naming the offset it
 * starts at in the whole stream. A string chunk counts as its UTF-8 bytes.
 */
export async function* strictUtf8Text(chunks: AsyncIterable<Uint8Array | string>, name: string): AsyncGenerator<string> {
  const decoder = strictUtf8Decoder();
  /** Bytes decoded so far: where `held` starts in the stream. */
  let decoded = 0;
  /** The start of a character the last chunk cut (at most 3 bytes), which the decoder holds back too. */
  let held: Uint8Array = new Uint8Array(0);
  for await (const chunk of chunks) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const window = held.length === 0 ? bytes : Buffer.concat([held, bytes]);
    let text: string;
    try {
      text = decoder.decode(bytes, { stream: true });
    } catch {
      throw new InvalidUtf8Error(name, decoded + firstInvalid(window));
    }
    // Valid UTF-8 encodes back to the very bytes it came from: its length is what was consumed.
    const consumed = Buffer.byteLength(text);
    decoded += consumed;
    held = window.subarray(consumed);
    if (text !== '') yield text;
  }
  if (held.length > 0) throw new InvalidUtf8Error(name, decoded);
}
