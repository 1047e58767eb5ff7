import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The ceiling: a bare `node:http` server answering one fixed small envelope to every request,
 * without reading the body, routing or authenticating. No Node service can beat it on the same
 * host, so service/ceiling is the share of that bound the service reaches.
 */
const BODY = Buffer.from('{"status":200,"message":"OK","data":null}');
const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'content-length': BODY.length };

export function createCeilingServer(): Server {
  return createServer((_req, res) => {
    res.writeHead(200, HEADERS);
    res.end(BODY);
  });
}

/**
 * The floor: what the contract asks of every answer and nothing else: a GET /book/{id} answer's
 * body and headers (Content-Type, Content-Length, Cache-Control, X-Content-Type-Options, an
 * X-Request-Id generated per answer, an ETag), written the way the service writes them, to every
 * request, still without reading, routing or authenticating. What the service costs above it is
 * what its own work costs (docs/performance.md, "Where the microseconds go").
 */
const FLOOR_BODY = Buffer.from('{"status":200,"message":"Book retrieved successfully","data":{"id":42,"title":"Seeded book 41","author":"Author 7","year":1991}}');
const FLOOR_ETAG = '"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZn"';

export function createFloorServer(): Server {
  return createServer((_req, res) => {
    res.writeHead(200, [
      'content-type',
      'application/json; charset=utf-8',
      'content-length',
      FLOOR_BODY.length,
      'cache-control',
      'no-store',
      'x-content-type-options',
      'nosniff',
      'x-request-id',
      randomUUID(),
      'etag',
      FLOOR_ETAG,
    ]);
    res.end(FLOOR_BODY);
  });
}

/** Run as a process: listens on 127.0.0.1 at the port given as the first argument (0: any) and prints it; `floor` as the second serves the floor. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const server = process.argv[3] === 'floor' ? createFloorServer() : createCeilingServer();
  server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
