/**
 * Where each HTTP/1.1 answer ends in the bytes a server writes, read by read, for a bench client
 * that sends its next request once an answer is whole. Content-Length framing only: every server
 * the bench measures sends one. The client shares its process with the server whose CPU is
 * measured, so a read is scanned where it lies: a body is counted down, never copied, and the only
 * text made is each answer's head. A head split between reads (a real socket's reads may cut
 * anywhere) is carried to the next read as a copy of its start.
 */
export class AnswerFramer {
  #bodyLeft = 0;
  #status = '';
  #headStart: Buffer | undefined;
  readonly #answered: (status: string) => void;

  /** `answered` is called with the status code (three digits) of each answer as its last byte is read. */
  constructor(answered: (status: string) => void) {
    this.#answered = answered;
  }

  read(chunk: Buffer): void {
    const bytes = this.#headStart === undefined ? chunk : Buffer.concat([this.#headStart, chunk]);
    this.#headStart = undefined;
    for (let at = 0; at < bytes.length; ) {
      if (this.#bodyLeft > 0) {
        const taken = Math.min(this.#bodyLeft, bytes.length - at);
        this.#bodyLeft -= taken;
        at += taken;
        if (this.#bodyLeft === 0) this.#answered(this.#status);
        continue;
      }
      const end = bytes.indexOf('\r\n\r\n', at);
      if (end === -1) {
        this.#headStart = Buffer.from(bytes.subarray(at));
        return;
      }
      const head = bytes.toString('latin1', at, end);
      this.#bodyLeft = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      at = end + 4;
      this.#status = head.slice(9, 12);
      if (this.#bodyLeft === 0) this.#answered(this.#status);
    }
  }
}
