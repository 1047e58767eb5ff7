/**
 * The elements of a JSON array read a chunk at a time: each element's text is found by tracking
 * strings and nesting, then parsed alone, so a catalogue of millions of books is never one string
 * or one parsed array. Malformed input fails like JSON.parse would: `<name> is not JSON: …`; valid
 * JSON that is not an array fails with `expected a JSON array of books, as export writes`.
 */
export async function* arrayElements(source: AsyncIterable<string>, name: string): AsyncGenerator<unknown> {
  const scan = new ArrayScan();
  const chunks = source[Symbol.asyncIterator]();
  for (let step = await chunks.next(); step.done !== true; step = await chunks.next()) {
    const { elements, stray } = scan.feed(step.value);
    for (const text of elements) yield parseJson(text, name);
    if (stray !== undefined) throw notAnArray(stray + (await restOf(chunks)), scan.ended, name);
  }
  if (!scan.ended) throw notJson(name, 'Unexpected end of JSON input');
}

/** Finds the text of each element of a JSON array fed to it a chunk at a time. */
class ArrayScan {
  // Where the scan is: before `[`, before the first element, inside an element, after `]`.
  #state: 'start' | 'first' | 'element' | 'after' = 'start';
  /** The start of an element that began in an earlier chunk. */
  #pending = '';
  #depth = 0;
  #inString = false;
  #escaped = false;

  /** Whether the array's `]` was seen. */
  get ended(): boolean {
    return this.#state === 'after';
  }

  /**
   * The elements that end in `chunk`, and `stray`: the text from the first character no array
   * holds there (before `[`, or after `]`) to the chunk's end, when there is one.
   */
  feed(chunk: string): { elements: string[]; stray: string | undefined } {
    const elements: string[] = [];
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (this.#state === 'element') {
        if (!this.#endsElement(c)) continue;
        elements.push(this.#pending + chunk.slice(from, i));
        this.#pending = '';
        from = i + 1;
        if (c === 93 /* ] */) this.#state = 'after';
      } else if (!isSpace(c)) {
        if (this.#state === 'start' && c === 91 /* [ */) this.#state = 'first';
        else if (this.#state === 'first' && c === 93) this.#state = 'after';
        else if (this.#state === 'first') {
          this.#state = 'element';
          from = i;
          i--;
        } else return { elements, stray: this.#pending + chunk.slice(i) };
      }
    }
    if (this.#state === 'element') this.#pending += chunk.slice(from);
    return { elements, stray: undefined };
  }

  /** Whether `c`, inside an element, ends it: a `,` or `]` outside its strings and nesting, which it tracks. */
  #endsElement(c: number): boolean {
    if (this.#inString) {
      if (this.#escaped) this.#escaped = false;
      else if (c === 92 /* \ */) this.#escaped = true;
      else if (c === 34 /* " */) this.#inString = false;
    } else if (c === 34) this.#inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) this.#depth++;
    else if ((c === 125 /* } */ || c === 93 /* ] */) && this.#depth > 0) this.#depth--;
    else return this.#depth === 0 && (c === 44 /* , */ || c === 93);
    return false;
  }
}

function notJson(name: string, detail: string): Error {
  return new Error(`${name} is not JSON: ${detail}`);
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw notJson(name, (err as Error).message);
  }
}

/** Text where no array may go on: JSON.parse's message for it when it is not JSON (as before streaming), else that it is not an array. */
function notAnArray(text: string, afterArray: boolean, name: string): Error {
  parseJson(afterArray ? `[]${text}` : text, name);
  return new Error('expected a JSON array of books, as export writes');
}

async function restOf(chunks: AsyncIterator<string>): Promise<string> {
  let rest = '';
  for (let more = await chunks.next(); more.done !== true; more = await chunks.next()) rest += more.value;
  return rest;
}

/** JSON's whitespace (RFC 8259 §2). */
function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}
