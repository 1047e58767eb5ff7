import { connect, type Socket } from 'node:net';
import { parseResponse, type RawResponse } from '../test/helpers/raw.ts';

/** Status, lower-case headers, the body as text and, when it is JSON, parsed. */
export type Answer = RawResponse;

/** Longer than any answer can take in-process: past it the server is stuck, which is a finding. */
const ANSWER_GUARD_MS = 5_000;

/**
 * A keep-alive HTTP/1.1 client on one raw socket, reopened whenever the server closes it: raw so
 * it can send bytes fetch refuses to, one socket so 20,000 requests take seconds.
 */
export class RawClient {
  readonly #port: number;
  #socket: Socket | undefined;
  #buffer: Buffer = Buffer.alloc(0);
  #closed = false;
  #wake: (() => void) | undefined;
  /** Connections opened so far. */
  opened = 0;

  constructor(port: number) {
    this.#port = port;
  }

  /** The answer, or why there is none (a string: the fuzzer reports it as a failure). */
  async send(bytes: Buffer, head: boolean): Promise<Answer | string> {
    const socket = this.#socket ?? (await this.#open());
    if (typeof socket === 'string') return socket;
    socket.write(bytes);
    let timer: NodeJS.Timeout | undefined;
    const guard = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no answer within ${ANSWER_GUARD_MS} ms`), ANSWER_GUARD_MS);
    });
    try {
      const answer = await Promise.race([this.#read(head), guard]);
      if (typeof answer === 'string') {
        this.close();
        return answer;
      }
      if (this.#buffer.length > 0) return `${this.#buffer.length} unexpected bytes after the answer: ${JSON.stringify(this.#buffer.subarray(0, 80).toString('latin1'))}`;
      if (/\bclose\b/i.test(answer.headers.connection ?? '') || this.#closed) this.close();
      return answer;
    } finally {
      clearTimeout(timer);
    }
  }

  get isOpen(): boolean {
    return this.#socket !== undefined;
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = undefined;
  }

  #open(): Promise<Socket | string> {
    return new Promise((resolve) => {
      const socket = connect(this.#port, '127.0.0.1');
      socket.setNoDelay(true);
      socket.once('error', (err) => resolve(`server unreachable: ${err.message}`));
      socket.once('connect', () => {
        this.opened++;
        this.#socket = socket;
        this.#buffer = Buffer.alloc(0);
        this.#closed = false;
        socket.on('data', (chunk: Buffer) => {
          this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
          this.#notify();
        });
        socket.on('close', () => {
          this.#closed = true;
          if (this.#socket === socket) this.#socket = undefined;
          this.#notify();
        });
        socket.on('error', () => {});
        resolve(socket);
      });
    });
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Reads one final answer, skipping interim 1xx ones (Expect: 100-continue). */
  async #read(head: boolean): Promise<Answer | string> {
    for (;;) {
      const parsed = parseResponse(this.#buffer, head, this.#closed);
      if (parsed !== undefined) {
        this.#buffer = this.#buffer.subarray(parsed.consumed);
        if (parsed.response.status >= 200) return parsed.response;
        continue;
      }
      if (this.#closed) return `connection closed without a complete answer; got ${JSON.stringify(this.#buffer.subarray(0, 200).toString('latin1'))}`;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}
