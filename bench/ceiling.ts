import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFloorServer } from './floor.ts';

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
 * Run as a process: listens on 127.0.0.1 at the port given as the first argument (0: any) and
 * prints it; `floor` as the second serves the floor (bench/floor.ts), its writes in a directory of
 * its own that goes with the process.
 */
if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[3] === 'floor' ? mkdtempSync(join(tmpdir(), 'book-catalogue-floor-')) : undefined;
  const server = dir === undefined ? createCeilingServer() : createFloorServer(dir);
  server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
  process.on('SIGTERM', () =>
    server.close(() => {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    }),
  );
}
