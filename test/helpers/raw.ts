import { connect, type Server, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Envelope } from './app.ts';
import { WAIT_MS } from './wait.ts';

/**
 * A raw `node:net` client for bytes `fetch` will not send: invalid UTF-8, hand-made chunked
 * bodies, malformed request lines, oversized headers (pillarjs/router's habit).
 */
export interface RawResponse {
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: Envelope | undefined;
}

export interface RawConnection {
  write(data: string | Uint8Array): void;
  /** The next complete response on this connection (`head`: the request was HEAD, so no body); fails past WAIT_MS. */
  response(options?: { head?: boolean }): Promise<RawResponse>;
  /** Resolves once the server has closed the connection (by FIN or reset). */
  readonly closed: Promise<void>;
  destroy(): void;
}

/** `localAddress`: the loopback address to connect from (on Linux every 127.x.y.z is one), to be another client address. */
export function openConnection(port: number, localAddress?: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', ...(localAddress !== undefined && { localAddress }) });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(wrap(socket));
    });
  });
}

/**
 * Sends `data` on a new connection, reads one response and waits until the server closes the
 * connection: for requests after which docs/contract.md, "Transport", says the connection is closed.
 */
export async function rawRequestThenClose(port: number, data: string | Uint8Array): Promise<RawResponse> {
  const conn = await openConnection(port);
  conn.write(data);
  const response = await conn.response();
  await conn.closed;
  return response;
}

/**
 * An HTTP/1.1 request as its bytes go out, for a raw connection: `authorization` as given
 * (`app.token()` carries its scheme), `body` sent as JSON with its exact Content-Length.
 */
export function requestText(method: string, path: string, options: { authorization?: string; body?: string } = {}): string {
  const { authorization, body } = options;
  let head = `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n`;
  if (authorization !== undefined) head += `Authorization: ${authorization}\r\n`;
  if (body === undefined) return `${head}\r\n`;
  return `${head}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** The status of every answer in `received`, the bytes a connection got until the server closed it. */
export function statusesIn(received: string): number[] {
  const statuses: number[] = [];
  let buffer = Buffer.from(received, 'latin1');
  for (let parsed = parseResponse(buffer, false, true); parsed !== undefined; parsed = parseResponse(buffer, false, true)) {
    statuses.push(parsed.response.status);
    buffer = buffer.subarray(parsed.consumed);
  }
  return statuses;
}

/** The client's TLS settings, when the server speaks TLS. */
export type ClientTls = { ca: Buffer; servername: string };

/**
 * Sends `data` on a new connection, closes its sending side (a half-close; over TLS, close_notify
 * and FIN) once `ready` resolves, and resolves with every byte received (latin1) when the server
 * has closed its side.
 */
export function sendThenHalfClose(port: number, data: string, options: { ready?: () => Promise<void>; tls?: ClientTls } = {}): Promise<string> {
  const { ready = async () => {}, tls } = options;
  return new Promise((resolve, reject) => {
    const sending = (): void => {
      socket.write(data);
      ready().then(() => socket.end(), reject);
    };
    const socket = tls === undefined ? connect(port, '127.0.0.1', sending) : tlsConnect({ host: '127.0.0.1', port, ...tls }, sending);
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
}

/** Sends `data` on a new connection with keep-alive semantics, reads one response, then hangs up. */
export async function rawRequest(port: number, data: string | Uint8Array, options: { head?: boolean } = {}): Promise<RawResponse> {
  const conn = await openConnection(port);
  try {
    conn.write(data);
    return await conn.response(options);
  } finally {
    conn.destroy();
  }
}

function wrap(socket: Socket): RawConnection {
  let buffer = Buffer.alloc(0);
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const closed = new Promise<void>((resolve) => {
    socket.on('close', () => {
      ended = true;
      notify();
      resolve();
    });
  });
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    notify();
  });
  // A reset after the server has answered is how some closes look from here; `closed` reports it.
  socket.on('error', () => {});

  /** Whether more bytes (or the close) came within `ms`. */
  const waitForData = (ms: number): Promise<boolean> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        resolve(false);
      }, ms);
      wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });

  return {
    write(data) {
      if (!socket.destroyed) socket.write(data);
    },
    closed,
    destroy: () => socket.destroy(),
    async response(options = {}) {
      const deadline = performance.now() + WAIT_MS;
      for (;;) {
        const parsed = parseResponse(buffer, options.head === true, ended);
        if (parsed !== undefined) {
          buffer = buffer.subarray(parsed.consumed);
          return parsed.response;
        }
        if (ended) throw new Error(`connection closed before a complete response; got ${JSON.stringify(buffer.toString('latin1'))}`);
        if (!(await waitForData(deadline - performance.now()))) {
          throw new Error(`no complete response within ${WAIT_MS / 1000} s; got ${JSON.stringify(buffer.toString('latin1'))}`);
        }
      }
    },
  };
}

/** One complete HTTP/1.1 response at the start of `buffer`, or undefined while more bytes are needed. */
export function parseResponse(buffer: Buffer, head: boolean, ended: boolean): { response: RawResponse; consumed: number } | undefined {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const lines = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number((lines[0] ?? '').split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const bodyStart = headEnd + 4;
  const declared = headers['content-length'];
  let bodyEnd: number;
  // An interim 1xx answer (100 Continue), 204, 304 and an answer to HEAD carry no body (RFC 9112 §6.3).
  if (head || (status >= 100 && status < 200) || status === 204 || status === 304) bodyEnd = bodyStart;
  else if (declared !== undefined) bodyEnd = bodyStart + Number(declared);
  else if (ended) bodyEnd = buffer.length;
  else return undefined;
  if (buffer.length < bodyEnd) return undefined;
  const body = buffer.subarray(bodyStart, bodyEnd).toString('utf8');
  let json: Envelope | undefined;
  try {
    json = JSON.parse(body) as Envelope;
  } catch {
    json = undefined;
  }
  return { response: { status, headers, body, json }, consumed: bodyEnd };
}

/**
 * A connection whose answers are never read: paused once it is open (over TLS, once its handshake
 * is done), its errors (the reset that cuts it) ignored.
 */
export function openPaused(port: number, tls?: ClientTls): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = tls === undefined ? connect(port, '127.0.0.1') : tlsConnect({ host: '127.0.0.1', port, ...tls });
    socket.once('error', reject);
    socket.once(tls === undefined ? 'connect' : 'secureConnect', () => {
      socket.off('error', reject);
      socket.on('error', () => {});
      socket.pause();
      resolve(socket);
    });
  });
}

/** How many connections `server` holds now. */
export function connectionCount(server: Pick<Server, 'getConnections'>): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}
