import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { parseCommand, type Config, type ConfigSources } from '../src/cli/config.ts';
import { ConfigError } from '../src/faults.ts';

function config(sources: Partial<ConfigSources>): Config {
  const command = parseCommand({ argv: [], env: {}, ...sources });
  assert.equal(command.kind, 'serve');
  return (command as { config: Config }).config;
}

describe('parseCommand (docs/contract.md, "Configuration")', () => {
  it('defaults: port 8080, all interfaces, ./data, info, admin, 20 failures, secret and password to be generated', () => {
    const c = config({});
    assert.equal(c.port, 8080);
    assert.equal(c.host, undefined);
    assert.equal(c.dataDir, './data');
    assert.equal(c.logLevel, 'info');
    assert.equal(c.secretToken, undefined);
    assert.equal(c.username, 'admin');
    assert.equal(c.password, undefined);
    assert.equal(c.loginMaxFailures, 20);
  });

  it('reads every setting from the environment', async () => {
    const env = {
      PORT: '9000',
      HOST: '127.0.0.1',
      DATA_DIR: '/srv/books',
      LOG_LEVEL: 'warn',
      SECRET_TOKEN: 's'.repeat(32),
      SECRET_TOKEN_PREVIOUS: 'p'.repeat(32),
      AUTH_USERNAME: 'curator',
      AUTH_PASSWORD: 'pw',
      LOGIN_MAX_FAILURES: '5',
      MAX_CONNECTIONS: '7',
      MAX_EVENT_STREAMS: '3',
      MAX_CONNECTIONS_PER_ADDRESS: '0',
      MAX_IN_FLIGHT_PER_ADDRESS: '9',
      MAX_EVENT_STREAMS_PER_ADDRESS: '2',
      MEMORY_BUDGET_MB: '64',
      JOURNAL_COMPACT_KB: '256',
      CORS_ORIGINS: 'https://app.example',
      ALLOWED_HOSTS: 'books.example.com,.example.org',
      TLS_CERT_FILE: '/etc/cert.pem',
      TLS_KEY_FILE: '/etc/key.pem',
      METRICS_PORT: '9100',
      METRICS_HOST: '::1',
      UI: 'off',
      STORE_URL: 'postgres://catalogue:pw@db.internal/books',
      PG_POOL_SIZE: '4',
    };
    // Every variable the parser reads is set here, so a new one cannot be skipped.
    const source = await readFile(new URL('../src/cli/config.ts', import.meta.url), 'utf8');
    const read = new Set([...source.matchAll(/env\('([A-Z_]+)'\)/g)].map((m) => m[1] as string));
    assert.deepEqual([...read].sort(), Object.keys(env).sort());
    assert.deepEqual(config({ env }), {
      port: 9000,
      host: '127.0.0.1',
      dataDir: '/srv/books',
      logLevel: 'warn',
      secretToken: 's'.repeat(32),
      secretTokenPrevious: 'p'.repeat(32),
      username: 'curator',
      password: 'pw',
      loginMaxFailures: 5,
      tls: { certFile: '/etc/cert.pem', keyFile: '/etc/key.pem' },
      maxConnections: 7,
      maxEventStreams: 3,
      maxConnectionsPerAddress: 0,
      maxInFlightPerAddress: 9,
      maxEventStreamsPerAddress: 2,
      memoryBudgetBytes: 64 * 1024 * 1024,
      journalCompactBytes: 256 * 1024,
      corsOrigins: ['https://app.example'],
      allowedHosts: ['books.example.com', '.example.org'],
      metrics: { port: 9100, host: '::1' },
      ui: false,
      store: { url: 'postgres://catalogue:pw@db.internal/books', poolSize: 4 },
    });
  });

  it('STORE_URL must be a postgres:// URL, and the message never repeats it (it may hold a password)', () => {
    assert.throws(() => config({ env: { STORE_URL: 'mysql://u:secret@db/x' } }), (err: Error) => err.message.includes('expected a postgres:// or postgresql:// URL') && !err.message.includes('secret'));
    assert.deepEqual(config({ env: { STORE_URL: 'postgresql://db/x' } }).store, { url: 'postgresql://db/x', poolSize: 8 });
    assert.throws(() => config({ env: { STORE_URL: 'postgres://db/x', PG_POOL_SIZE: '0' } }), /invalid PostgreSQL pool size "0" \(PG_POOL_SIZE\)/);
  });

  it('JOURNAL_COMPACT_KB is a whole number of KiB, 1 or more; unset, the store keeps its default', () => {
    assert.equal(config({ env: {} }).journalCompactBytes, undefined);
    assert.equal(config({ env: { JOURNAL_COMPACT_KB: '1' } }).journalCompactBytes, 1024);
    for (const bad of ['0', '-1', '1.5', '4MiB']) {
      assert.throws(() => config({ env: { JOURNAL_COMPACT_KB: bad } }), new RegExp(`invalid journal compaction size "${bad.replace('.', '\\.')}" \\(JOURNAL_COMPACT_KB\\)`), bad);
    }
  });

  it('reads every flag, as "--flag value" and as "--flag=value"', () => {
    for (const argv of [
      ['--port', '9001', '--host', '::1', '--data-dir', 'd', '--log-level', 'debug'],
      ['--port=9001', '--host=::1', '--data-dir=d', '--log-level=debug'],
    ]) {
      const c = config({ argv });
      assert.deepEqual([c.port, c.host, c.dataDir, c.logLevel], [9001, '::1', 'd', 'debug'], argv.join(' '));
    }
  });

  it('flags win over env vars, which win over .env', () => {
    const dotenv = 'PORT=1\nDATA_DIR=file\nLOG_LEVEL=error\nAUTH_USERNAME=fromfile\n';
    const env = { PORT: '2', DATA_DIR: 'env' };
    const c = config({ argv: ['--port', '3'], env, dotenv });
    assert.deepEqual([c.port, c.dataDir, c.logLevel, c.username], [3, 'env', 'error', 'fromfile']);
  });

  it('.env understands comments, quotes and export-free KEY=value lines (Node\'s own parser)', () => {
    const c = config({ dotenv: '# a comment\nAUTH_PASSWORD="with spaces # not a comment"\nPORT=8081 # trailing\n' });
    assert.equal(c.password, 'with spaces # not a comment');
    assert.equal(c.port, 8081);
  });

  it('an empty env var counts as unset', () => {
    const c = config({ env: { PORT: '', SECRET_TOKEN: '', AUTH_PASSWORD: '' } });
    assert.equal(c.port, 8080);
    assert.equal(c.secretToken, undefined);
    assert.equal(c.password, undefined);
  });

  it('port 0 and 65535 are valid', () => {
    assert.equal(config({ argv: ['--port', '0'] }).port, 0);
    assert.equal(config({ env: { PORT: '65535' } }).port, 65535);
  });

  it('LOGIN_MAX_FAILURES=0 disables throttling', () => {
    assert.equal(config({ env: { LOGIN_MAX_FAILURES: '0' } }).loginMaxFailures, 0);
  });

  it('every log level is accepted', () => {
    for (const level of ['debug', 'info', 'warn', 'error', 'silent']) assert.equal(config({ env: { LOG_LEVEL: level } }).logLevel, level);
  });

  it('--help and -h, --version and -v win over everything else, even invalid values', () => {
    assert.deepEqual(parseCommand({ argv: ['--help'], env: {} }), { kind: 'help' });
    assert.deepEqual(parseCommand({ argv: ['-h'], env: { PORT: 'bad' } }), { kind: 'help' });
    assert.deepEqual(parseCommand({ argv: ['--version'], env: {} }), { kind: 'version' });
    assert.deepEqual(parseCommand({ argv: ['-v'], env: {} }), { kind: 'version' });
  });

  describe('invalid configuration throws ConfigError with one line', () => {
    const rows: { name: string; sources: Partial<ConfigSources>; mentions: RegExp }[] = [
      { name: 'PORT=65536', sources: { env: { PORT: '65536' } }, mentions: /invalid port "65536"/ },
      { name: 'PORT=-1', sources: { env: { PORT: '-1' } }, mentions: /invalid port "-1"/ },
      { name: 'PORT=8080.0', sources: { env: { PORT: '8080.0' } }, mentions: /invalid port/ },
      { name: 'PORT=0x50', sources: { env: { PORT: '0x50' } }, mentions: /invalid port/ },
      { name: 'PORT=" 80"', sources: { env: { PORT: ' 80' } }, mentions: /invalid port/ },
      { name: '--port 100000', sources: { argv: ['--port', '100000'] }, mentions: /invalid port "100000"/ },
      { name: 'PORT in .env invalid', sources: { dotenv: 'PORT=nope' }, mentions: /invalid port "nope"/ },
      { name: 'an unknown flag', sources: { argv: ['--colour'] }, mentions: /unknown option --colour/ },
      { name: 'an unknown flag with a value', sources: { argv: ['--colour=red'] }, mentions: /unknown option --colour/ },
      { name: 'a positional argument', sources: { argv: ['start'] }, mentions: /unexpected argument "start"/ },
      { name: 'a flag without its value', sources: { argv: ['--data-dir'] }, mentions: /--data-dir needs a value/ },
      { name: 'a flag with an empty value (--data-dir=)', sources: { argv: ['--data-dir='] }, mentions: /--data-dir needs a value/ },
      { name: 'a flag with an empty separate value', sources: { argv: ['--host', ''] }, mentions: /--host needs a value/ },
      { name: 'a flag followed by another flag', sources: { argv: ['--port', '--host', 'x'] }, mentions: /--port needs a value/ },
      { name: 'LOG_LEVEL=verbose', sources: { env: { LOG_LEVEL: 'verbose' } }, mentions: /invalid log level "verbose"/ },
      { name: 'LOG_LEVEL=INFO (case matters)', sources: { env: { LOG_LEVEL: 'INFO' } }, mentions: /invalid log level/ },
      { name: 'LOGIN_MAX_FAILURES=-1', sources: { env: { LOGIN_MAX_FAILURES: '-1' } }, mentions: /LOGIN_MAX_FAILURES/ },
      { name: 'LOGIN_MAX_FAILURES=1.5', sources: { env: { LOGIN_MAX_FAILURES: '1.5' } }, mentions: /LOGIN_MAX_FAILURES/ },
      { name: 'ALLOWED_HOSTS with a port', sources: { env: { ALLOWED_HOSTS: 'books.example.com:443' } }, mentions: /invalid ALLOWED_HOSTS entry "books\.example\.com:443"/ },
      { name: 'ALLOWED_HOSTS in .env, invalid', sources: { dotenv: 'ALLOWED_HOSTS=*.example.com' }, mentions: /ALLOWED_HOSTS entry "\*\.example\.com".*\(ALLOWED_HOSTS in \.env\)$/ },
    ];
    for (const row of rows) {
      it(`ConfigError for ${row.name}`, () => {
        assert.throws(
          () => parseCommand({ argv: [], env: {}, ...row.sources }),
          (err: unknown) => err instanceof ConfigError && err.code === 'ERR_CONFIG' && row.mentions.test(err.message) && !err.message.includes('\n'),
        );
      });
    }
  });

  it('is pure: it reads neither process.env nor process.argv', () => {
    const saved = process.env.PORT;
    process.env.PORT = 'not-a-port';
    try {
      assert.equal(config({}).port, 8080);
    } finally {
      if (saved === undefined) delete process.env.PORT;
      else process.env.PORT = saved;
    }
  });
});
