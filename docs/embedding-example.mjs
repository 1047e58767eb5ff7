// @ts-check
// Mounts the book catalogue under /catalogue in an existing node:http server.
import { createServer } from 'node:http';
import { createApp, createLogger, openStore } from 'book-catalogue';

const secret = process.env.SECRET_TOKEN;
const password = process.env.CATALOGUE_PASSWORD;
if (!secret || !password) throw new Error('set SECRET_TOKEN (32+ bytes) and CATALOGUE_PASSWORD');

// One process per data directory: openStore takes its lock.
const store = await openStore(process.env.DATA_DIR ?? './catalogue-data');
const PREFIX = '/catalogue';
const catalogue = createApp({
  store,
  secret,
  username: 'librarian',
  password,
  mountPath: PREFIX, // its OpenAPI `servers` and next-page `Link` headers point under the prefix
  // The library writes logs only to the logger it is given (JSON lines).
  logger: createLogger({ level: 'warn', write: (line) => process.stderr.write(line) }),
});

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url.startsWith(`${PREFIX}/`)) {
    req.url = url.slice(PREFIX.length); // the catalogue sees /books, /book/1, /token, ...
    catalogue(req, res);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/plain' }).end('the host application\n');
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  console.log(`catalogue at http://127.0.0.1:${port}${PREFIX}`);
});

// The library installs no signal handler: the host decides how to stop.
process.once('SIGTERM', () => {
  catalogue.draining = true; // /healthz answers 503 and answers carry Connection: close
  server.close(() => void catalogue.close()); // close() returns once pending writes are on disk
  server.closeIdleConnections();
});
