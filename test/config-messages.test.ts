import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { malformedDotenvLines } from '../src/cli/dotenv-lines.ts';
import { parseCommand, type Config, type ConfigSources } from '../src/cli/config.ts';
import { ConfigError } from '../src/faults.ts';
import { killAll, runMain, startMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('book-catalogue-config-messages-');
after(async () => {
  await killAll();
  await temp.removeAll();
});

function message(sources: Partial<ConfigSources>): string {
  try {
    parseCommand({ argv: [], env: {}, ...sources });
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.message;
  }
  assert.fail('expected a ConfigError');
}

function config(sources: Partial<ConfigSources>): Config {
  const command = parseCommand({ argv: [], env: {}, ...sources });
  assert.equal(command.kind, 'serve');
  return (command as { config: Config }).config;
}

describe('configuration messages agree with each other and say where a value came from', () => {
  it('MAX_CONNECTIONS: "abc", "0" and "00" get one message, stating the range, echoing the text as given', () => {
    const expected = (text: string): string => `invalid connection limit "${text}" (MAX_CONNECTIONS): expected a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`;
    for (const text of ['abc', '0', '00', '-1', '1.5']) assert.equal(message({ env: { MAX_CONNECTIONS: text } }), expected(text));
    assert.equal(config({ env: { MAX_CONNECTIONS: '01' } }).maxConnections, 1);
  });

  it('LOGIN_MAX_FAILURES: any whole number that is a safe integer is accepted; beyond, the limit is stated', () => {
    assert.equal(config({ env: { LOGIN_MAX_FAILURES: '1234567890' } }).loginMaxFailures, 1234567890);
    assert.equal(config({ env: { LOGIN_MAX_FAILURES: '0' } }).loginMaxFailures, 0);
    for (const text of ['abc', '99999999999999999999']) {
      assert.equal(
        message({ env: { LOGIN_MAX_FAILURES: text } }),
        `invalid failed-login limit "${text}" (LOGIN_MAX_FAILURES): expected a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`,
      );
    }
  });

  it('the per-address limits: 0 lifts each (behind a reverse proxy); anything but a whole number is refused, naming the variable', () => {
    const rows = [
      { name: 'MAX_CONNECTIONS_PER_ADDRESS', what: 'per-address connection limit', key: 'maxConnectionsPerAddress' },
      { name: 'MAX_IN_FLIGHT_PER_ADDRESS', what: 'per-address in-flight limit', key: 'maxInFlightPerAddress' },
      { name: 'MAX_EVENT_STREAMS_PER_ADDRESS', what: 'per-address event stream limit', key: 'maxEventStreamsPerAddress' },
    ] as const;
    for (const { name, what, key } of rows) {
      assert.equal(config({ env: { [name]: '0' } })[key], 0, name);
      for (const text of ['abc', '-1', '1.5']) {
        assert.equal(message({ env: { [name]: text } }), `invalid ${what} "${text}" (${name}): expected a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`);
      }
    }
    assert.deepEqual(
      rows.map(({ key }) => config({})[key]),
      [64, 256, 16],
      'the defaults (SECURITY.md, "Limits")',
    );
  });

  it('a value from .env says so; from the environment, the variable; from a flag, the flag', () => {
    assert.equal(message({ dotenv: 'PORT=nope' }), 'invalid port "nope" (PORT in .env): expected a whole number from 0 to 65535');
    assert.equal(message({ env: { PORT: 'nope' } }), 'invalid port "nope" (PORT): expected a whole number from 0 to 65535');
    assert.equal(message({ argv: ['--port', 'nope'], dotenv: 'PORT=1' }), 'invalid port "nope" (--port): expected a whole number from 0 to 65535');
    assert.match(message({ dotenv: 'LOG_LEVEL=loud' }), /^invalid log level "loud" \(LOG_LEVEL in \.env\): expected one of /);
    assert.match(message({ argv: ['--log-level=loud'] }), /^invalid log level "loud" \(--log-level\)/);
    assert.match(message({ dotenv: 'MAX_CONNECTIONS=0' }), /\(MAX_CONNECTIONS in \.env\)/);
    assert.match(message({ dotenv: 'LOGIN_MAX_FAILURES=x' }), /\(LOGIN_MAX_FAILURES in \.env\)/);
    assert.match(message({ dotenv: 'CORS_ORIGINS=nope' }), /^invalid CORS_ORIGINS entry "nope": .* \(CORS_ORIGINS in \.env\)$/);
    assert.doesNotMatch(message({ env: { CORS_ORIGINS: 'nope' } }), /\.env/);
    assert.match(message({ env: { PORT: 'x' }, dotenv: 'PORT=1' }), /\(PORT\)/, 'the environment wins over .env, and says so');
  });
});

describe('.env lines Node would skip silently are reported with their line number', () => {
  it('finds lines that are neither blank, a comment nor NAME=value, and skips quoted values spanning lines', () => {
    const text = ['# comment', '', 'PORT 8080', 'export HOST=127.0.0.1', '=x', 'A="two', 'lines"', "B='open", 'C=1', '  D = 2 ', 'just words'].join('\n');
    assert.deepEqual(malformedDotenvLines(text), [3, 5, 11]);
    assert.deepEqual(malformedDotenvLines('A="x\r\ny"\r\nnope\r\n'), [3]);
    assert.deepEqual(malformedDotenvLines('A=`never closed\nnope'), [2], 'an unclosed quote is literal: the next line is read afresh');
  });

  it('a malformed line does not swallow the setting under it (Node would read "FOO 1\\nPORT" as one name)', () => {
    assert.match(message({ dotenv: 'FOO 1\nPORT=80x\n' }), /\(PORT in \.env\)/);
    assert.equal(config({ dotenv: 'LOG_LEVEL warn\r\nPORT=8123\n' }).port, 8123);
    assert.equal(config({ dotenv: 'A="two\nlines"\nnope\nPORT=8124' }).port, 8124, 'a quoted value spanning lines is kept');
  });

  it('the service warns about each one (a JSON log line naming .env and the line) and still starts', async () => {
    const cwd = await temp.make();
    await writeFile(join(cwd, '.env'), 'AUTH_PASSWORD=pw-from-dotenv\nLOG_LEVEL warn\nSECRET_TOKEN=0123456789abcdef0123456789abcdef\n');
    const service = await startMain({ cwd, args: ['--host', '127.0.0.1', '--port', '0'] });
    const warnings = service
      .output()
      .stdout.split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level === 40);
    assert.deepEqual(
      warnings.map((w) => w.msg),
      ['.env line 2 is not NAME=value: ignored'],
    );
    assert.equal((await service.stop()).code, 0);
  });

  it('export says so on stderr too', async () => {
    const cwd = await temp.make();
    await writeFile(join(cwd, '.env'), 'DATA_DIR data\n');
    const exit = await runMain({ cwd, args: ['export'] });
    assert.match(exit.stderr, /^book-catalogue: warning: \.env line 1 is not NAME=value: ignored\n/);
  });
});

describe('TLS files: each fault names the file', () => {
  it('a key that is not the certificate\'s stops startup with one line naming both files', async () => {
    const cwd = await temp.make();
    const cert = fileURLToPath(new URL('fixtures/tls/cert.pem', import.meta.url));
    const otherKey = join(cwd, 'other-key.pem');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await writeFile(otherKey, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const exit = await runMain({ cwd, args: ['--host', '127.0.0.1', '--port', '0', '--tls-cert', cert, '--tls-key', otherKey] });
    assert.equal(exit.code, 1);
    assert.equal(exit.stderr, `book-catalogue: TLS key ${otherKey} does not belong to the certificate in ${cert}\n`);
  });
});
