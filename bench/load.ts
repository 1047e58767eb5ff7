import { connect, type Socket } from 'node:net';
import { LatencyHistogram, type LatencySummary } from './histogram.ts';

/**
 * An HTTP/1.1 keep-alive load generator on raw `node:net` sockets. A generator on `node:http`
 * agents spends more CPU per request than a bare server does (it would top out far below the
 * ceiling it measures), so this one sends
 * request bytes built before the clock starts and parses answers with byte tests only: no
 * strings, no per-response allocation. One request in flight per connection (no pipelining).
 */
export interface LoadOptions {
  host: string;
  port: number;
  connections: number;
  /** Measured time; the figures cover only this window. */
  durationMs: number;
  /** Load before the measured window (JIT, connection set-up); counted apart. */
  warmupMs: number;
  /** Complete HTTP/1.1 requests, sent in turn by each connection (staggered starts). */
  requests: readonly Uint8Array[];
}

export interface LoadResult extends LatencySummary {
  /** Answers completed inside the measured window. */
  readonly requests: number;
  readonly elapsedMs: number;
  readonly requestsPerSecond: number;
  /** Status code → answers, measured window only. */
  readonly statuses: Readonly<Record<string, number>>;
  readonly warmupRequests: number;
  /** Answers to requests in flight when the window closed (sent, answered, not counted). */
  readonly drainedRequests: number;
  /** Socket errors, unexpected closes and unparseable answers. */
  readonly errors: number;
}

type Phase = 'warmup' | 'measure' | 'drain';

/** Responses that carry no Content-Length are counted as errors: every server measured here sets one. */
const NO_LENGTH = -1;
const CONTENT_LENGTH = 'content-length:';
/** Shared by every connection: a read is parsed before the next one can start. */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

class Run {
  phase: Phase = 'warmup';
  measured = 0;
  warmup = 0;
  drained = 0;
  errors = 0;
  readonly statuses = new Uint32Array(600);
  readonly histogram = new LatencyHistogram();
  readonly options: LoadOptions;
  readonly sockets = new Set<Socket>();
  finish: () => void = () => {};

  constructor(options: LoadOptions) {
    this.options = options;
  }

  completed(status: number, micros: number): void {
    if (this.phase === 'measure') {
      this.measured++;
      this.statuses[status < 600 ? status : 0]!++;
      this.histogram.record(micros);
    } else if (this.phase === 'warmup') {
      this.warmup++;
    } else {
      this.drained++;
    }
  }

  closed(socket: Socket, hadError: boolean): void {
    // A server that closes a keep-alive connection mid-run has failed this request.
    if (!hadError && this.phase !== 'drain') this.errors++;
    this.sockets.delete(socket);
    if (this.sockets.size === 0) this.finish();
  }
}

class Connection {
  readonly #run: Run;
  readonly #socket: Socket;
  #next: number;
  #sentAt = 0;
  /** Header bytes of an answer split across reads; null when none is pending. */
  #partial: Buffer | null = null;
  #bodyLeft = 0;
  #status = 0;

  constructor(run: Run, first: number) {
    this.#run = run;
    this.#next = first;
    const { host, port } = run.options;
    // onread: Node reads straight into one reused buffer and calls back, with no stream, no
    // 'data' event and no Buffer allocated per read; bytes kept past the callback are copied.
    const onread = { buffer: READ_BUFFER, callback: (n: number): boolean => this.#onData(READ_BUFFER.subarray(0, n)) };
    const socket = connect({ host, port, noDelay: true, onread });
    this.#socket = socket;
    run.sockets.add(socket);
    socket.on('connect', () => this.#send());
    socket.on('error', () => {
      run.errors++;
    });
    socket.on('close', (hadError: boolean) => run.closed(socket, hadError));
  }

  #send(): void {
    const { requests } = this.#run.options;
    const request = requests[this.#next] as Uint8Array;
    this.#next = this.#next + 1 === requests.length ? 0 : this.#next + 1;
    this.#sentAt = performance.now();
    this.#socket.write(request);
  }

  /** Always true: keep reading. */
  #onData(data: Buffer): boolean {
    let chunk = data;
    let pos = 0;
    if (this.#partial !== null) {
      chunk = Buffer.concat([this.#partial, data]);
      this.#partial = null;
    }
    while (pos < chunk.length) {
      if (this.#bodyLeft > 0) {
        const take = Math.min(this.#bodyLeft, chunk.length - pos);
        pos += take;
        this.#bodyLeft -= take;
        if (this.#bodyLeft === 0) this.#answered();
        continue;
      }
      const end = this.#parseHead(chunk, pos);
      if (end === -1) {
        this.#partial = Buffer.from(chunk.subarray(pos));
        return true;
      }
      if (end === -2) return true;
      pos = end;
      if (this.#bodyLeft === 0) this.#answered();
    }
    return true;
  }

  /** Parses a status line and headers at `pos`: the offset after them, -1 if incomplete, -2 on a protocol error. */
  #parseHead(chunk: Buffer, pos: number): number {
    if (chunk.length - pos < 12) return -1;
    this.#status = (chunk[pos + 9]! - 48) * 100 + (chunk[pos + 10]! - 48) * 10 + (chunk[pos + 11]! - 48);
    let length = NO_LENGTH;
    let line = pos;
    for (;;) {
      const cr = chunk.indexOf(13, line);
      if (cr === -1 || cr + 1 >= chunk.length) return -1;
      if (cr === line) {
        if (length === NO_LENGTH) return this.#protocolError();
        this.#bodyLeft = length;
        return cr + 2;
      }
      if (length === NO_LENGTH && cr - line > CONTENT_LENGTH.length && isContentLength(chunk, line)) {
        length = parseDigits(chunk, line + CONTENT_LENGTH.length, cr);
      }
      line = cr + 2;
    }
  }

  #protocolError(): number {
    this.#run.errors++;
    this.#socket.destroy();
    return -2;
  }

  #answered(): void {
    const run = this.#run;
    run.completed(this.#status, (performance.now() - this.#sentAt) * 1000);
    if (run.phase === 'drain') this.#socket.end();
    else this.#send();
  }
}

/** Case-insensitive `content-length:` at `pos` (header names are case-insensitive, RFC 9110 §5.1). */
function isContentLength(chunk: Buffer, pos: number): boolean {
  for (let i = 0; i < CONTENT_LENGTH.length; i++) {
    if ((chunk[pos + i]! | 0x20) !== CONTENT_LENGTH.charCodeAt(i)) return false;
  }
  return true;
}

function parseDigits(chunk: Buffer, from: number, to: number): number {
  let n = 0;
  let seen = false;
  for (let i = from; i < to; i++) {
    const c = chunk[i]!;
    if (c >= 48 && c <= 57) {
      n = n * 10 + (c - 48);
      seen = true;
    } else if (c !== 32 && c !== 9) {
      return NO_LENGTH;
    }
  }
  return seen ? n : NO_LENGTH;
}

/** A server that stops answering must not hang the run: connections still open this long after the window are cut. */
const DRAIN_LIMIT_MS = 5000;

/** Runs warm-up then the measured window; resolves once every connection has closed. */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.requests.length === 0) throw new TypeError('runLoad needs at least one request');
  const run = new Run(options);
  return new Promise((resolve) => {
    let started = 0;
    let elapsedMs = 0;
    run.finish = () => {
      const statuses: Record<string, number> = {};
      run.statuses.forEach((n, status) => {
        if (n > 0) statuses[status] = n;
      });
      resolve({
        requests: run.measured,
        elapsedMs,
        requestsPerSecond: elapsedMs > 0 ? (run.measured * 1000) / elapsedMs : 0,
        statuses,
        warmupRequests: run.warmup,
        drainedRequests: run.drained,
        errors: run.errors,
        ...run.histogram.summary(),
      });
    };
    const step = Math.max(1, Math.floor(options.requests.length / options.connections));
    for (let i = 0; i < options.connections; i++) new Connection(run, (i * step) % options.requests.length);
    setTimeout(() => {
      run.phase = 'measure';
      started = performance.now();
      setTimeout(() => {
        elapsedMs = performance.now() - started;
        run.phase = 'drain';
        setTimeout(() => {
          run.errors += run.sockets.size;
          for (const socket of run.sockets) socket.destroy();
        }, DRAIN_LIMIT_MS).unref();
      }, options.durationMs);
    }, options.warmupMs);
  });
}
