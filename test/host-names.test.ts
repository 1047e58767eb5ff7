import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, LOOPBACK_HOST_NAMES, openStore } from '../src/index.ts';
import { ConfigError } from '../src/faults.ts';
import { defaultAllowedHosts, parseAllowedHosts } from '../src/transport/host-names.ts';
import { startApp, TEST_PASSWORD, TEST_USER, type TestApp } from './helpers/app.ts';
import { killAll, metricsPortOf, startMain, type RunningService } from './helpers/process.ts';
import { openConnection, rawRequest, type RawResponse } from './helpers/raw.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('book-catalogue-hosts-');
after(async () => {
  await killAll();
  await temp.removeAll();
});

const MISDIRECTED = { status: 421, message: 'Misdirected request', data: null };

/** `GET path` with exactly this Host line (or none), on a new connection. */
function withHost(port: number, host: string | undefined, path = '/healthz', extra = ''): Promise<RawResponse> {
  const hostLine = host === undefined ? '' : `Host: ${host}\r\n`;
  return rawRequest(port, `GET ${path} HTTP/1.1\r\n${hostLine}${extra}\r\n`);
}

function login(port: number, host: string, password: string): Promise<RawResponse> {
  const body = JSON.stringify({ username: TEST_USER, password });
  return rawRequest(port, `POST /token HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
}

describe('the default for a listening address (docs/contract.md, "Host names")', () => {
  it('all interfaces, or an address that is not loopback: any host (undefined)', () => {
    for (const address of [undefined, '0.0.0.0', '::', '192.0.2.7', '2001:db8::7', 'books.example.com']) {
      assert.equal(defaultAllowedHosts(address), undefined, String(address));
    }
  });

  it('a loopback address: the loopback names, and the address itself when it is another loopback literal', () => {
    for (const address of ['127.0.0.1', 'localhost', 'LOCALHOST', 'app.localhost', '::1', '0:0:0:0:0:0:0:1']) {
      assert.deepEqual(defaultAllowedHosts(address), [...LOOPBACK_HOST_NAMES], address);
    }
    assert.deepEqual(LOOPBACK_HOST_NAMES, ['localhost', '.localhost', '127.0.0.1', '[::1]']);
    assert.deepEqual(defaultAllowedHosts('127.0.0.2'), [...LOOPBACK_HOST_NAMES, '127.0.0.2']);
    assert.deepEqual(defaultAllowedHosts('::ffff:127.0.0.1'), [...LOOPBACK_HOST_NAMES, '[::ffff:7f00:1]']);
  });
});

describe('ALLOWED_HOSTS entries', () => {
  it('names, .domains, addresses (IPv6 with or without brackets) and * are taken as written', () => {
    const text = ' books.example.com, .example.org ,192.0.2.7,[2001:db8::7],::1,*,localhost.,Books.Example.NET';
    assert.deepEqual(parseAllowedHosts(text), ['books.example.com', '.example.org', '192.0.2.7', '[2001:db8::7]', '::1', '*', 'localhost.', 'Books.Example.NET']);
  });

  const refused: [string, RegExp][] = [
    ['localhost:8080', /"localhost:8080": expected a name without a port/],
    ['http://books.example.com', /expected a name without a port/],
    ['books.example.com/path', /expected \*, a host name/],
    ['*.example.com', /write \.example\.com for a domain and all its subdomains/],
    ['bücher.example', /xn-- form/],
    ['a..b', /expected \*, a host name/],
    ['books example', /expected \*, a host name/],
    ['[fe80::1%eth0]', /expected an IPv6 address without a zone/],
    ['[books.example.com]', /expected \*, a host name/],
    [' , ', /ALLOWED_HOSTS lists no host name/],
  ];
  for (const [text, message] of refused) {
    it(`${JSON.stringify(text)} is a ConfigError naming the entry`, () => {
      assert.throws(() => parseAllowedHosts(text), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }

  it('createApp checks allowedHosts the same way, and refuses an empty list', async () => {
    const store = await openStore(await temp.make());
    try {
      const base = { store, secret: 's'.repeat(32), username: 'u', password: 'p' };
      assert.throws(() => createApp({ ...base, allowedHosts: ['localhost:8080'] }), /invalid allowedHosts entry "localhost:8080"/);
      assert.throws(() => createApp({ ...base, allowedHosts: [] }), /allowedHosts lists no host name/);
    } finally {
      await store.close();
    }
  });
});

describe('a service on 127.0.0.1 with the loopback default', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ allowedHosts: defaultAllowedHosts('127.0.0.1') as string[], loginMaxFailures: 2 });
  });
  after(() => app.close());

  for (const host of ['evil.example', 'evil.example:8080', 'localhost.evil.example', 'evillocalhost', '127.0.0.1.nip.io', '127.0.0.2', '192.168.1.10', '0.0.0.0', '[::2]', '[::1', 'localhost:http', 'localhost:80:80', '[::1]x', ':80', '', 'evil.example#.localhost', 'evil@x.localhost', 'localhost:99999', 'localhost:080808', 'localhost:0x50', 'localhost:1e3', 'localhost: 80', '[::1 ]']) {
    it(`Host: ${JSON.stringify(host)} is 421 Misdirected request, in the envelope`, async () => {
      const res = await withHost(app.port, host);
      assert.deepEqual(res.json, MISDIRECTED);
      assert.equal(res.status, 421);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(res.headers['x-request-id'] ?? '', /./);
    });
  }

  for (const host of ['localhost', 'localhost:PORT', 'LocalHost:PORT', 'localhost.:PORT', 'books.localhost:PORT', '127.0.0.1', '127.0.0.1:PORT', '[::1]', '[::1]:PORT', 'localhost:']) {
    it(`Host: ${host} is served`, async () => {
      const res = await withHost(app.port, host.replace('PORT', String(app.port)));
      assert.deepEqual(res.json, { status: 200, message: 'OK', data: { status: 'ok' } });
    });
  }

  it('the host is checked before the route, the method and the token: 421, not 404, 405 or 401', async () => {
    assert.equal((await withHost(app.port, 'evil.example', '/nowhere')).status, 421);
    assert.equal((await rawRequest(app.port, 'PATCH /books HTTP/1.1\r\nHost: evil.example\r\n\r\n')).status, 421);
    assert.equal((await withHost(app.port, 'evil.example', '/books')).status, 421);
    assert.equal((await withHost(app.port, 'localhost', '/nowhere')).status, 404, 'the same requests under a loopback name');
    assert.equal((await withHost(app.port, 'localhost', '/books')).status, 401);
  });

  it('a page rebound to 127.0.0.1 cannot read the catalogue, even with a token', async () => {
    const res = await withHost(app.port, 'evil.example:8080', '/books', `Authorization: ${app.token()}\r\n`);
    assert.deepEqual(res.json, MISDIRECTED);
    assert.equal((await withHost(app.port, `localhost:${app.port}`, '/books', `Authorization: ${app.token()}\r\n`)).status, 200);
  });

  it('POST /token under a rebound name is refused and not counted as a failed login', async () => {
    for (let i = 0; i < 5; i++) assert.deepEqual((await login(app.port, 'evil.example:8080', 'guess')).json, MISDIRECTED);
    // loginMaxFailures is 2: had the five counted, the next answer would be 429.
    assert.equal((await login(app.port, 'localhost', 'guess')).status, 401);
    assert.equal((await login(app.port, 'localhost', TEST_PASSWORD)).status, 200);
    assert.equal((await login(app.port, 'localhost', 'guess')).status, 401);
    assert.equal((await login(app.port, 'localhost', 'guess')).status, 429, 'the bound still holds for the real address');
  });

  it('one keep-alive connection: a refused name right after an accepted one is still 421, and the accepted one still served', async () => {
    const conn = await openConnection(app.port);
    try {
      for (const [host, status] of [['localhost', 200], ['evil.example', 421], ['localhost', 200], ['localhost.evil.example', 421], ['', 421], [`127.0.0.1:${app.port}`, 200]] as const) {
        conn.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
        assert.equal((await conn.response()).status, status, host);
      }
    } finally {
      conn.destroy();
    }
  });

  it('two Host headers are still 400 Bad request (framing first); an HTTP/1.0 request without Host is served', async () => {
    const two = await rawRequest(app.port, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n');
    assert.deepEqual([two.status, two.json?.message], [400, 'Bad request']);
    const none = await rawRequest(app.port, 'GET /healthz HTTP/1.0\r\n\r\n');
    assert.equal(none.status, 200);
  });

  it('an absolute-form target names the host (RFC 9112 §3.2.2): its authority is checked, not Host', async () => {
    const rebound = await rawRequest(app.port, 'GET http://evil.example/healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assert.deepEqual(rebound.json, MISDIRECTED);
    const userinfo = await rawRequest(app.port, 'GET http://localhost@evil.example/healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assert.deepEqual(userinfo.json, MISDIRECTED);
    const local = await rawRequest(app.port, `GET http://localhost:${app.port}/healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n`);
    assert.equal(local.status, 200);
  });
});

describe('allowedHosts lists the names accepted, overriding the default', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ allowedHosts: ['books.example.com', '.example.org', '[2001:db8::7]'] });
  });
  after(() => app.close());

  for (const host of ['books.example.com', 'books.example.com:443', 'BOOKS.example.COM.', 'example.org', 'a.b.example.org:8080', '[2001:db8::7]:80']) {
    it(`Host: ${host} is served`, async () => {
      assert.equal((await withHost(app.port, host)).status, 200);
    });
  }
  for (const host of ['localhost', '127.0.0.1', 'evil.books.example.com', 'notexample.org', 'example.org.evil.example', '[2001:db8::8]']) {
    it(`Host: ${host} is 421`, async () => {
      assert.deepEqual((await withHost(app.port, host)).json, MISDIRECTED);
    });
  }
});

describe('any host when nothing restricts it', () => {
  it('the library default, and *, accept any Host', async () => {
    for (const allowedHosts of [undefined, ['localhost', '*']]) {
      const app = await startApp(allowedHosts === undefined ? {} : { allowedHosts });
      try {
        for (const host of ['evil.example', 'localhost', 't']) assert.equal((await withHost(app.port, host)).status, 200, `${host} with ${String(allowedHosts)}`);
      } finally {
        await app.close();
      }
    }
  });
});

describe('the command line (dist/main.js)', () => {
  const ENV = { SECRET_TOKEN: 'host-names-secret-that-is-32-bytes-long!', AUTH_PASSWORD: 'pw', LOG_LEVEL: 'info' };

  async function start(args: string[], env: Record<string, string> = {}): Promise<RunningService> {
    const cwd = await temp.make();
    return startMain({ cwd, args: ['--port', '0', '--data-dir', 'data', ...args], env: { ...ENV, ...env } });
  }


  it('HOST=127.0.0.1: only loopback names, on the service\'s port and on the metrics listener', async () => {
    const service = await start(['--metrics-port', '0'], { HOST: '127.0.0.1' });
    try {
      assert.deepEqual((await withHost(service.port, 'evil.example:8080')).json, MISDIRECTED);
      assert.equal((await withHost(service.port, `localhost:${service.port}`)).status, 200);
      assert.equal((await withHost(service.port, `127.0.0.1:${service.port}`)).status, 200);
      const metrics = metricsPortOf(service);
      // The listener answers as the service's port does: the envelope, with a Content-Length.
      assert.deepEqual((await withHost(metrics, 'evil.example', '/metrics')).json, MISDIRECTED);
      assert.equal((await withHost(metrics, `127.0.0.1:${metrics}`, '/metrics')).status, 200);
    } finally {
      assert.equal((await service.stop()).code, 0);
    }
  });

  it('ALLOWED_HOSTS replaces the default: a listed name and a .domain are served, localhost is not', async () => {
    const service = await start(['--host', '127.0.0.1'], { ALLOWED_HOSTS: 'books.example.com,.example.org' });
    try {
      assert.equal((await withHost(service.port, 'books.example.com')).status, 200);
      assert.equal((await withHost(service.port, 'shelf.example.org:8080')).status, 200);
      assert.deepEqual((await withHost(service.port, `localhost:${service.port}`)).json, MISDIRECTED);
    } finally {
      assert.equal((await service.stop()).code, 0);
    }
  });

  it('listening on all interfaces (no HOST): any host', async () => {
    const service = await start([]);
    try {
      assert.equal((await withHost(service.port, 'evil.example:8080')).status, 200);
    } finally {
      assert.equal((await service.stop()).code, 0);
    }
  });
});
