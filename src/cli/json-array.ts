/**
 * The elements of a JSON array read a chunk at a time: each element's text is found by tracking
 * strings and nesting, then parsed alone, so a catalogue of millions of books is never one string
 * or one parsed array. Malformed input fails like JSON.parse would: `<name> is not JSON: …`; valid
 * JSON that is not an array fails with `expected a JSON array of books, as export writes`.
 */
export async function* arrayElements(source: AsyncIterable<string>, name: string): AsyncGenerator<unknown> {
  const notJson = (detail: string): Error => new Error(`${name} is not JSON: ${detail}`);
  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw notJson((err as Error).message);
    }
  };
  // Where the scan is: before `[`, before the first element, inside an element, after `]`.
  let state = 'start' as 'start' | 'first' | 'element' | 'after';
  let pending = '';
  let depth = 0;
  let inString = false;
  let escaped = false;
  const chunks = source[Symbol.asyncIterator]();
  for (let step = await chunks.next(); step.done !== true; step = await chunks.next()) {
    const chunk = step.value;
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (state === 'element') {
        if (inString) {
          if (escaped) escaped = false;
          else if (c === 92 /* \ */) escaped = true;
          else if (c === 34 /* " */) inString = false;
        } else if (c === 34) inString = true;
        else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
        else if ((c === 125 /* } */ || c === 93 /* ] */) && depth > 0) depth--;
        else if (depth === 0 && (c === 44 /* , */ || c === 93)) {
          yield parse(pending + chunk.slice(from, i));
          pending = '';
          from = i + 1;
          if (c === 93) state = 'after';
        }
      } else if (!isSpace(c)) {
        if (state === 'start' && c === 91) {
          state = 'first';
        } else if (state === 'first' && c === 93) {
          state = 'after';
        } else if (state === 'first') {
          state = 'element';
          from = i;
          i--;
        } else {
          // Not an array, or text after it: JSON.parse says which (its message, as before streaming).
          let rest = pending + chunk.slice(i);
          for (let more = await chunks.next(); more.done !== true; more = await chunks.next()) rest += more.value;
          parse(state === 'after' ? `[]${rest}` : rest);
          throw new Error('expected a JSON array of books, as export writes');
        }
      }
    }
    if (state === 'element') pending += chunk.slice(from);
  }
  if (state !== 'after') throw notJson('Unexpected end of JSON input');
}

/** JSON's whitespace (RFC 8259 §2). */
function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}
