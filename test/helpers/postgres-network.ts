import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

/** One message of PostgreSQL's protocol: a type byte, then a length that counts itself, then the body. */
function message(type: string, body: string): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(Buffer.byteLength(body, 'latin1') + 4, 1);
  return Buffer.concat([head, Buffer.from(body, 'latin1')]);
}

/** Trust auth, ready for a query, then the FATAL a terminated backend sends. */
const READY_THEN_ENDED = Buffer.concat([message('R', '\0\0\0\0'), message('Z', 'I'), message('E', 'SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0')]);

/**
 * A PostgreSQL server as far as a connection's first bytes go: it answers every startup with
 * ready and the session's end in one write, as a client whose loop was busy reads a backend
 * terminated right after it connected. Listening on 127.0.0.1.
 */
export async function serverEndingEachSession(): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => socket.end(READY_THEN_ENDED));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

export interface FeedRelay {
  readonly port: number;
  /** Whether an answer is held back. */
  readonly holding: boolean;
  /** Cuts the feed's listening connection; with holdCheck, holds back the answer to the next one's first query after LISTEN. */
  cutFeed(options: { holdCheck: boolean }): void;
  /** Sends what was held back. */
  release(): void;
  /** Holds back everything the database sends, on every connection, as a frozen database or a network that drops packets would. */
  freeze(): void;
  /** Sends everything held back by freeze(), and lets what follows through. */
  thaw(): void;
  close(): void;
}

interface Pair {
  client: Socket;
  server: Socket;
  /** Whether this connection sent LISTEN: the feed's. */
  feed: boolean;
}

/**
 * A TCP relay on 127.0.0.1 to the cluster's socket in `socketDir`, as the network between a store
 * and its database: it can cut the feed's listening connection and hold back what the database
 * answers to the connection that replaces it, or hold back all it answers.
 */
export async function feedRelay(socketDir: string): Promise<FeedRelay> {
  const pairs = new Set<Pair>();
  let holdNext = false;
  let held: { socket: Socket; bytes: Buffer[] } | undefined;
  let frozen: Map<Socket, Buffer[]> | undefined;
  const relay = createServer((client) => {
    const pair: Pair = { client, server: connect(join(socketDir, '.s.PGSQL.5432')), feed: false };
    pairs.add(pair);
    client.on('data', (bytes: Buffer) => {
      if (bytes.includes('LISTEN ')) pair.feed = true;
      else if (pair.feed && holdNext) {
        holdNext = false;
        held = { socket: client, bytes: [] };
      }
      pair.server.write(bytes);
    });
    pair.server.on('data', (bytes: Buffer) => {
      if (held?.socket === client) held.bytes.push(bytes);
      else if (frozen !== undefined) frozen.set(client, [...(frozen.get(client) ?? []), bytes]);
      else client.write(bytes);
    });
    for (const socket of [client, pair.server]) {
      socket.on('error', () => {});
      socket.on('close', () => {
        pair.client.destroy();
        pair.server.destroy();
        pairs.delete(pair);
      });
    }
  });
  relay.listen(0, '127.0.0.1');
  await once(relay, 'listening');
  return {
    port: (relay.address() as AddressInfo).port,
    get holding() {
      return held !== undefined;
    },
    cutFeed({ holdCheck }) {
      holdNext = holdCheck;
      for (const pair of pairs) if (pair.feed) pair.client.destroy();
    },
    release() {
      const { socket, bytes } = held as { socket: Socket; bytes: Buffer[] };
      held = undefined;
      for (const chunk of bytes) socket.write(chunk);
    },
    freeze() {
      frozen = new Map();
    },
    thaw() {
      const waiting = frozen ?? new Map<Socket, Buffer[]>();
      frozen = undefined;
      for (const [socket, bytes] of waiting) for (const chunk of bytes) socket.write(chunk);
    },
    close() {
      relay.close();
      for (const pair of pairs) pair.client.destroy();
    },
  };
}
