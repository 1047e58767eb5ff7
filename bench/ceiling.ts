import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The ceiling: a bare `node:http` server answering one fixed small envelope to every request,
 * without reading the body, routing or authenticating. No Node service can beat it on the same
 * host, so service/ceiling is the share of that bound the service reaches.
 */
const BODY = Buffer.from('{"status":200,"message":"OK","data":null}');
const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'content-length': BODY.length };

function createCeilingServer(): Server {
  return createServer((_req, res) => {
    res.writeHead(200, HEADERS);
    res.end(BODY);
  });
}

/** Run as a process: listens on 127.0.0.1 at the port given as the first argument (0: any) and prints it. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const server = createCeilingServer();
  server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
