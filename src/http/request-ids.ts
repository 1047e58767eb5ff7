import { randomBytes } from 'node:crypto';

/** `00` … `ff`: a byte as two hex digits, without a number-to-string conversion per answer. */
const HEX: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Six hex digits of a 24-bit value. */
function hex24(v: number): string {
  return (HEX[v >>> 16] as string) + (HEX[(v >>> 8) & 0xff] as string) + (HEX[v & 0xff] as string);
}

/**
 * Request ids the service makes up (docs/contract.md, "Logging"): UUID-shaped, in the version 4
 * layout, so that log tools expecting a UUID take them, and unique without a random draw per
 * answer: 74 bits drawn once per process, then a 48-bit counter from a random start, kept as two
 * 24-bit halves (small integers: a 48-bit number is a double, whose hex digits V8 makes through a
 * slow path that showed in `perf`). They name a request in the logs and grant nothing, so they
 * need not be unpredictable; randomUUID for every answer was about 0.35 µs of a GET /book/{id}'s
 * 9 µs (`npm run bench:in-process -- --cpu-prof DIR`).
 */
export class RequestIds {
  readonly #prefix: string;
  #high: number;
  #low: number;

  constructor(random: Buffer = randomBytes(16)) {
    const hex = random.toString('hex');
    // Version 4 in the 13th hex digit, the RFC 9562 variant (10xx) in the 17th.
    const variant = ((random[8] as number) & 0x3f) | 0x80;
    this.#prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant.toString(16)}${hex.slice(18, 20)}-`;
    this.#high = random.readUIntBE(10, 3);
    this.#low = random.readUIntBE(13, 3);
  }

  next(): string {
    const id = this.#prefix + hex24(this.#high) + hex24(this.#low);
    if (this.#low === HALF_END - 1) {
      this.#low = 0;
      this.#high = this.#high === HALF_END - 1 ? 0 : this.#high + 1;
    } else {
      this.#low++;
    }
    return id;
  }
}

const HALF_END = 2 ** 24;
