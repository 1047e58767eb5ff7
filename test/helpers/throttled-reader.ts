import { connect } from 'node:net';

/**
 * A raw GET that reads its answer at a set pace: the socket is paused, and every 20 ms it may take
 * what `bytesPerSecond` allows since the request was sent. Such a reader keeps the server's
 * writes moving (no send timeout ever sees it stalled) while its answer stays mostly unsent.
 */
export interface ThrottledReader {
  readonly bytesPerSecond: number;
  /** Bytes received, head included. */
  readonly received: number;
  /** When the first byte of the answer arrived (performance.now()); undefined before. */
  readonly firstByteAt: number | undefined;
  /** The whole answer arrived (as many body bytes as its Content-Length said). */
  readonly complete: boolean;
  /** When the connection closed (performance.now()); undefined while open. */
  readonly closedAt: number | undefined;
  /** The answer's head and body, once complete. */
  text(): string;
  /** Resolves once the connection has closed, by either side. */
  readonly closed: Promise<void>;
  destroy(): void;
}

/** `pauseMs`: it takes nothing for this long after sending the request, then reads at its pace from then on. */
export async function throttledGet(port: number, path: string, token: string, bytesPerSecond: number, headers = '', pauseMs = 0): Promise<ThrottledReader> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => {});
  socket.pause();
  const chunks: Buffer[] = [];
  let received = 0;
  let expected: number | undefined;
  let firstByteAt: number | undefined;
  let closedAt: number | undefined;
  const started = performance.now();
  const allowed = (): number => (bytesPerSecond * Math.max(performance.now() - started - pauseMs, 0)) / 1000;
  const pace = setInterval(() => {
    if (received < allowed()) socket.resume();
  }, 20);
  socket.on('data', (chunk: Buffer) => {
    firstByteAt ??= performance.now();
    received += chunk.length;
    chunks.push(chunk);
    if (expected === undefined) {
      const head = Buffer.concat(chunks).toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(head.slice(0, end));
      if (end !== -1 && length !== null) expected = end + 4 + Number(length[1]);
    }
    if (received >= allowed()) socket.pause();
  });
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closedAt = performance.now();
      clearInterval(pace);
      resolve();
    }),
  );
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${token}\r\nConnection: close\r\n${headers}\r\n`);
  return {
    bytesPerSecond,
    get received() {
      return received;
    },
    get firstByteAt() {
      return firstByteAt;
    },
    get complete() {
      return expected !== undefined && received >= expected;
    },
    get closedAt() {
      return closedAt;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
    closed,
    destroy: () => socket.destroy(),
  };
}
