import { hash } from 'node:crypto';
import { HttpError, MESSAGES } from '../errors.ts';

/**
 * A strong entity tag (RFC 9110 §8.8.3) for a book: a hash of its response JSON, so two answers
 * carry the same tag exactly when they carry the same bytes, across restarts too.
 */
export function bookEtag(json: string): string {
  return `"${hash('sha256', json, 'base64url')}"`;
}

/**
 * RFC 9110 §13.1.1: `*` matches any current book; otherwise a comma-separated list of entity tags
 * compared strongly, so a weak tag (`W/"…"`) never matches.
 */
function ifMatchHolds(header: string, currentJson: string): boolean {
  const value = header.trim();
  if (value === '*') return true;
  const current = bookEtag(currentJson);
  return value.split(',').some((tag) => tag.trim() === current);
}

/** Throws 412 `Precondition failed` unless the header is absent or matches the current book. */
export function checkIfMatch(header: string | undefined, currentJson: string): void {
  if (header !== undefined && !ifMatchHolds(header, currentJson)) throw new HttpError(412, MESSAGES.preconditionFailed);
}

/**
 * Orders writes to one book so a conditional write compares against the state it will replace:
 * the store applies a change only after its fsync, so a change still queued there is invisible
 * to `get`. A conditional write waits until no earlier write to that book is pending, then checks
 * and hands its write to the store in that same synchronous step, so no other writer can slip in
 * between its check and its write; unconditional writes only register themselves.
 */
export class BookWriteGate {
  readonly #pending = new Map<number, Set<Promise<unknown>>>();

  /**
   * Runs `start` (check, then enqueue the write) once no write to `id` is pending, and registers
   * the write it returns. A throw from `start` (404, 412) rejects without writing.
   */
  async exclusive<T>(id: number, start: () => Promise<T>): Promise<T> {
    for (let set = this.#pending.get(id); set !== undefined; set = this.#pending.get(id)) {
      await Promise.allSettled(set);
    }
    return this.track(id, start());
  }

  /** Registers a write already handed to the store; returns it unchanged. */
  track<T>(id: number, write: Promise<T>): Promise<T> {
    let set = this.#pending.get(id);
    if (set === undefined) {
      set = new Set();
      this.#pending.set(id, set);
    }
    const entry = set;
    entry.add(write);
    const done = (): void => {
      entry.delete(write);
      if (entry.size === 0 && this.#pending.get(id) === entry) this.#pending.delete(id);
    };
    write.then(done, done);
    return write;
  }
}
