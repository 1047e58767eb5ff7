import type { Readable, Writable } from 'node:stream';

/**
 * The Chrome DevTools Protocol over a pipe (`--remote-debugging-pipe`): JSON messages, each ended
 * by a NUL byte, commands written to the browser's fd 3 and answers and events read from its fd 4
 * (what puppeteer's pipe transport does). Commands carry an id; the answer with that id settles them.
 */
export interface CdpEvent {
  readonly method: string;
  readonly params: Record<string, unknown>;
  /** The attached target's session (flatten mode); absent for browser-level events. */
  readonly sessionId?: string;
}

interface Pending {
  resolve(result: unknown): void;
  reject(err: Error): void;
  method: string;
}

export class CdpError extends Error {
  override readonly name = 'CdpError';
}

export class CdpConnection {
  readonly #out: Writable;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Set<(event: CdpEvent) => void>();
  #nextId = 1;
  #buffered: Buffer[] = [];
  #closed: Error | undefined;

  constructor(out: Writable, input: Readable) {
    this.#out = out;
    input.on('data', (chunk: Buffer) => this.#receive(chunk));
    input.on('end', () => this.close('the browser closed its end of the pipe'));
    input.on('error', (err) => this.close(`reading from the browser failed: ${err.message}`));
    out.on('error', (err) => this.close(`writing to the browser failed: ${err.message}`));
  }

  /** Sends a command; resolves with its result, rejects with the browser's error message. */
  send<T = Record<string, unknown>>(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<T> {
    if (this.#closed !== undefined) return Promise.reject(new CdpError(`${method}: ${this.#closed.message}`));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (result: unknown) => void, reject, method });
      this.#out.write(`${JSON.stringify({ id, method, params, ...(sessionId !== undefined && { sessionId }) })}\0`);
    });
  }

  /** Every event from now on; returns the function that stops listening. */
  on(listener: (event: CdpEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Rejects every command still waiting; later sends reject at once. */
  close(reason: string): void {
    if (this.#closed !== undefined) return;
    this.#closed = new CdpError(reason);
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.reject(new CdpError(`${pending.method}: ${reason}`));
    }
  }

  #receive(chunk: Buffer): void {
    // A message may span chunks, and a chunk may end inside a multi-byte character: split on the
    // NUL byte first, decode whole messages only.
    let start = 0;
    for (let end = chunk.indexOf(0, start); end !== -1; end = chunk.indexOf(0, start)) {
      this.#buffered.push(chunk.subarray(start, end));
      const text = Buffer.concat(this.#buffered).toString('utf8');
      this.#buffered = [];
      start = end + 1;
      this.#dispatch(text);
    }
    if (start < chunk.length) this.#buffered.push(chunk.subarray(start));
  }

  #dispatch(text: string): void {
    const message = JSON.parse(text) as { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: Record<string, unknown>; sessionId?: string };
    if (message.id !== undefined) {
      const pending = this.#pending.get(message.id);
      if (pending === undefined) return;
      this.#pending.delete(message.id);
      if (message.error !== undefined) pending.reject(new CdpError(`${pending.method}: ${message.error.message}`));
      else pending.resolve(message.result ?? {});
      return;
    }
    if (message.method === undefined) return;
    const event: CdpEvent = { method: message.method, params: message.params ?? {}, ...(message.sessionId !== undefined && { sessionId: message.sessionId }) };
    for (const listener of this.#listeners) listener(event);
  }
}
