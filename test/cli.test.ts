import assert from 'node:assert/strict';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { signToken } from '../src/auth/jwt.ts';
import { login, loginToken } from './helpers/login.ts';
import { openConnection } from './helpers/raw.ts';
import { killAll, launchMain, outputMatching, runMain, startMain, type Exit, type RunningService } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { until, within } from './helpers/wait.ts';

const SECRET = 'cli-test-secret-that-is-32-bytes-or-more';
const PASSWORD = 'cli-test-password';
const LOCAL = ['--host', '127.0.0.1', '--port', '0'];

/** docs/contract.md, "Configuration": one clear line on stderr, a non-zero exit, never a stack trace. */
function assertOneLineFailure(exit: Exit, mentions: RegExp): void {
  assert.notEqual(exit.code, 0, 'non-zero exit');
  assert.equal(exit.signal, null);
  const lines = exit.stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `one line on stderr, got: ${exit.stderr}`);
  assert.match(lines[0] as string, mentions);
  assert.doesNotMatch(exit.stderr, /\n\s+at |Error:|node:internal/, 'no stack trace');
}

/** A port that was free a moment ago, for the one case that has no startup line to read it from. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

// A safety net, not a measurement: a child that never prints its startup line fails the file instead of hanging it.
describe('the command line (docs/contract.md, "Configuration")', { concurrency: true, timeout: 60_000 }, () => {
  let root: string;
  let n = 0;
  /** A fresh empty working directory per case: no .env, no data. */
  const freshDir = async (): Promise<string> => {
    const dir = join(root, `case-${++n}`);
    await mkdir(dir);
    return dir;
  };
  const temp = tempDirs('book-catalogue-cli-');
  before(async () => {
    root = await temp.make();
  });
  after(async () => {
    await killAll();
    await temp.removeAll();
  });

  it('--help prints usage on stdout and exits 0', async () => {
    for (const flag of ['--help', '-h']) {
      const exit = await runMain({ cwd: await freshDir(), args: [flag] });
      assert.equal(exit.code, 0);
      assert.match(exit.stdout, /^Usage: book-catalogue/);
      for (const name of ['--port', '--host', '--data-dir', '--log-level', 'SECRET_TOKEN', 'AUTH_USERNAME', 'AUTH_PASSWORD']) {
        assert.ok(exit.stdout.includes(name), `usage names ${name}`);
      }
      assert.equal(exit.stderr, '');
    }
  });

  it('--version prints the package version and exits 0', async () => {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    const exit = await runMain({ cwd: await freshDir(), args: ['--version'] });
    assert.equal(exit.code, 0);
    assert.equal(exit.stdout.trim(), pkg.version);
  });

  describe('invalid configuration stops startup with one line on stderr, no stack trace', { concurrency: true }, () => {
    const rows: { name: string; args?: string[]; env?: Record<string, string>; mentions: RegExp }[] = [
      { name: '--port 65536', args: ['--port', '65536'], mentions: /port.*65536/ },
      { name: '--port abc', args: ['--port', 'abc'], mentions: /port.*abc/ },
      { name: '--port=-1', args: ['--port=-1'], mentions: /port.*-1/ },
      { name: '--port 80.5', args: ['--port', '80.5'], mentions: /port/ },
      { name: 'PORT=70000', env: { PORT: '70000' }, mentions: /port.*70000/ },
      { name: 'PORT=http', env: { PORT: 'http' }, mentions: /port.*http/ },
      { name: 'an unknown flag --verbose', args: ['--verbose'], mentions: /unknown option --verbose/ },
      { name: 'a stray argument', args: ['serve'], mentions: /serve/ },
      { name: '--port without a value', args: ['--port'], mentions: /--port/ },
      { name: 'LOG_LEVEL=loud', env: { LOG_LEVEL: 'loud' }, mentions: /log level.*loud/ },
      { name: '--log-level trace', args: ['--log-level', 'trace'], mentions: /log level.*trace/ },
      { name: 'LOGIN_MAX_FAILURES=many', env: { LOGIN_MAX_FAILURES: 'many' }, mentions: /LOGIN_MAX_FAILURES/ },
      { name: 'an invalid port with LOG_LEVEL=silent (fatal errors print at every level)', args: ['--port', 'x'], env: { LOG_LEVEL: 'silent' }, mentions: /port/ },
    ];
    for (const row of rows) {
      it(`exits non-zero with one clear line for ${row.name}`, async () => {
        const exit = await runMain({ cwd: await freshDir(), args: row.args ?? [], env: row.env ?? {} });
        assertOneLineFailure(exit, row.mentions);
        assert.equal(exit.stdout, '');
      });
    }

    it('exits non-zero with one clear line when the data directory is unusable (a file)', async () => {
      const cwd = await freshDir();
      await writeFile(join(cwd, 'not-a-dir'), 'x');
      const exit = await runMain({ cwd, args: [...LOCAL, '--data-dir', 'not-a-dir'], env: { SECRET_TOKEN: SECRET, AUTH_PASSWORD: PASSWORD } });
      assertOneLineFailure(exit, /data directory.*not-a-dir/);
    });
  });

  it('exits non-zero with one clear line when .env cannot be read (a directory)', async () => {
    const cwd = await freshDir();
    await mkdir(join(cwd, '.env'));
    assertOneLineFailure(await runMain({ cwd, args: LOCAL }), /cannot read \.env/);
  });

  describe('flags win over env vars, which win over a .env file in the working directory', { concurrency: true }, () => {
    // An invalid value names itself in the error, so the message shows which source was used.
    it('--port beats PORT', async () => {
      const exit = await runMain({ cwd: await freshDir(), args: ['--port', '77777'], env: { PORT: '88888' } });
      assertOneLineFailure(exit, /77777/);
    });
    it('PORT beats .env', async () => {
      const cwd = await freshDir();
      await writeFile(join(cwd, '.env'), 'PORT=66666\n');
      assertOneLineFailure(await runMain({ cwd, env: { PORT: '88888' } }), /88888/);
    });
    it('.env is read when present', async () => {
      const cwd = await freshDir();
      await writeFile(join(cwd, '.env'), '# comment\nPORT=66666\n');
      assertOneLineFailure(await runMain({ cwd }), /66666/);
    });
    it('--log-level beats LOG_LEVEL beats .env', async () => {
      const cwd = await freshDir();
      await writeFile(join(cwd, '.env'), 'LOG_LEVEL=fromfile\n');
      assertOneLineFailure(await runMain({ cwd, env: { LOG_LEVEL: 'fromenv' }, args: ['--log-level', 'fromflag'] }), /fromflag/);
      assertOneLineFailure(await runMain({ cwd, env: { LOG_LEVEL: 'fromenv' } }), /fromenv/);
    });
    it('a service really runs on what .env, env and flags give: --data-dir over DATA_DIR over .env', async () => {
      const cwd = await freshDir();
      await writeFile(join(cwd, '.env'), `DATA_DIR=from-file\nSECRET_TOKEN=${SECRET}\nAUTH_PASSWORD=${PASSWORD}\n`);
      const seen: string[] = [];
      for (const [env, args] of [
        [{}, []],
        [{ DATA_DIR: 'from-env' }, []],
        [{ DATA_DIR: 'from-env' }, ['--data-dir', 'from-flag']],
      ] as const) {
        const service = await startMain({ cwd, env, args: [...LOCAL, ...args] });
        assert.equal((await login(service.url, PASSWORD)).status, 200, 'AUTH_PASSWORD from .env is used');
        seen.push(service.startup.dataDir);
        assert.equal((await service.stop()).code, 0);
      }
      assert.deepEqual(seen, [join(cwd, 'from-file'), join(cwd, 'from-env'), join(cwd, 'from-flag')]);
    });
  });

  it('first start: generated secret and password kept with mode 0600, the password printed once; reused later', async () => {
    const cwd = await freshDir();
    const first = await startMain({ cwd, args: LOCAL });
    const out1 = await outputMatching(first, 'stderr', /Set AUTH_PASSWORD.*\n/);
    const notice = /Generated a password for user "admin": (\S+)/.exec(out1);
    assert.ok(notice, 'the password notice is printed on the first start');
    const password = notice[1] as string;
    assert.equal(out1.split(password).length - 1, 1, 'the password appears exactly once');
    assert.match(out1, /stored in .*auth-password/, 'the notice says where it is stored');
    assert.match(out1, /AUTH_PASSWORD/, 'the notice says how to set your own');
    assert.ok(!first.output().stdout.includes(password), 'stdout (JSON log lines) never holds the password');
    for (const file of ['secret-token', 'auth-password']) {
      const info = await stat(join(cwd, 'data', file));
      assert.equal(info.mode & 0o777, 0o600, `${file} has mode 0600`);
    }
    const secret = (await readFile(join(cwd, 'data', 'secret-token'), 'utf8')).trim();
    assert.ok(Buffer.byteLength(secret) >= 32);
    const token = await loginToken(first.url, password);
    assert.equal((await first.stop()).code, 0);

    const second = await startMain({ cwd, args: LOCAL });
    const out2 = second.output().stdout + second.output().stderr;
    assert.doesNotMatch(out2, /Generated a password/, 'no notice on the second start');
    assert.ok(!out2.includes(password), 'the password is never printed again');
    assert.equal((await login(second.url, password)).status, 200, 'the same password works');
    const books = await fetch(`${second.url}/books`, { headers: { authorization: token } });
    assert.equal(books.status, 200, 'a token from the first run is valid: the secret was reused');
    assert.equal((await readFile(join(cwd, 'data', 'secret-token'), 'utf8')).trim(), secret);
    assert.equal((await second.stop()).code, 0);
  });

  it('a first start that cannot listen shows no password and keeps none: the next start that serves makes one and shows it', async () => {
    const cwd = await freshDir();
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (busy.address() as { port: number }).port;
      const failed = await runMain({ cwd, args: ['--host', '127.0.0.1', '--port', String(port)] });
      assert.equal(failed.code, 1, failed.stderr);
      assert.match(failed.stderr, /cannot listen on 127\.0\.0\.1:\d+/);
      assert.doesNotMatch(failed.stderr, /Generated a password/, 'no password shown by a start that did not serve');
      await assert.rejects(stat(join(cwd, 'data', 'auth-password')), { code: 'ENOENT' }, 'no password kept that nobody was shown');
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
    const serving = await startMain({ cwd, args: LOCAL });
    const out = await outputMatching(serving, 'stderr', /Set AUTH_PASSWORD.*\n/);
    const password = /Generated a password for user "admin": (\S+)/.exec(out)?.[1];
    assert.ok(password !== undefined, 'the start that serves shows the password it made');
    assert.equal((await login(serving.url, password)).status, 200);
    assert.equal((await serving.stop()).code, 0);
  });

  it('the password notice is printed whatever the log level (LOG_LEVEL=silent)', async () => {
    const cwd = await freshDir();
    const port = await freePort();
    const service = launchMain({ cwd, args: ['--host', '127.0.0.1', '--port', String(port)], env: { LOG_LEVEL: 'silent' } });
    let ended = false;
    void service.exited.then(() => (ended = true));
    // Silent: no startup line to wait for, so wait until the port answers (or the process ends).
    await until('the silent service answering /healthz (or ending)', async () => ended || (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)));
    service.child.kill('SIGTERM');
    const exit = await within('the service ending on SIGTERM', service.exited);
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stderr, /Generated a password for user "admin": \S+/);
    assert.equal(exit.stdout, '', 'no log line at silent');
  });

  it('the startup line says where it listens and where the data lives', async () => {
    const cwd = await freshDir();
    const service = await startMain({ cwd, args: [...LOCAL, '--data-dir', 'store-here'], env: { SECRET_TOKEN: SECRET, AUTH_PASSWORD: PASSWORD } });
    assert.ok(service.startup.msg.includes(`http://127.0.0.1:${service.port}`), service.startup.msg);
    assert.ok(service.startup.msg.includes(join(cwd, 'store-here')), service.startup.msg);
    const lines = service.output().stdout.split('\n').filter((l) => l.includes('listening on'));
    assert.equal(lines.length, 1);
    assert.equal((await service.stop()).code, 0);
  });

  it('without --host or HOST it listens on all interfaces', async () => {
    const cwd = await freshDir();
    const service = await startMain({ cwd, args: ['--port', '0'], env: { SECRET_TOKEN: SECRET, AUTH_PASSWORD: PASSWORD } });
    assert.match(service.startup.msg, /listening on http:\/\/(\[::\]|0\.0\.0\.0):\d+/);
    assert.equal((await fetch(`http://127.0.0.1:${service.port}/healthz`)).status, 200);
    assert.equal((await service.stop()).code, 0);
  });

  it('the default data directory is ./data, created if missing', async () => {
    const cwd = await freshDir();
    const service = await startMain({ cwd, args: LOCAL, env: { SECRET_TOKEN: SECRET, AUTH_PASSWORD: PASSWORD } });
    assert.equal(service.startup.dataDir, join(cwd, 'data'));
    assert.ok((await stat(join(cwd, 'data'))).isDirectory());
    assert.equal((await service.stop()).code, 0);
  });

  it('AUTH_USERNAME unset is admin; AUTH_USERNAME set replaces it', async () => {
    const cwd = await freshDir();
    const service = await startMain({ cwd, args: LOCAL, env: { SECRET_TOKEN: SECRET, AUTH_PASSWORD: PASSWORD, AUTH_USERNAME: 'curator' } });
    assert.equal((await login(service.url, PASSWORD, 'curator')).status, 200);
    assert.equal((await login(service.url, PASSWORD, 'admin')).status, 401);
    assert.equal((await service.stop()).code, 0);
  });

  it('SECRET_TOKEN shorter than 32 bytes logs a warning and runs', async () => {
    const cwd = await freshDir();
    const service = await startMain({ cwd, args: LOCAL, env: { SECRET_TOKEN: 'short', AUTH_PASSWORD: PASSWORD } });
    assert.match(service.output().stdout, /"level":40,.*shorter than 32 bytes/);
    assert.equal((await login(service.url, PASSWORD)).status, 200);
    const token = signToken('admin', Buffer.from('short'), Date.now() / 1000);
    assert.equal((await fetch(`${service.url}/books`, { headers: { authorization: token } })).status, 200, 'SECRET_TOKEN signs and verifies');
    assert.equal((await service.stop()).code, 0);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal}: a request in flight finishes, then the process exits 0`, async () => {
      const cwd = await freshDir();
      const service = await startMain({ cwd, args: LOCAL, env: { SECRET_TOKEN: SECRET, AUTH_PASSWORD: PASSWORD } });
      const body = '{"title":"in flight","author":"a","year":1}';
      const token = signToken('admin', Buffer.from(SECRET), Date.now() / 1000);
      const conn = await openConnection(service.port);
      // 100 Continue proves the server has the request in hand before the signal is sent.
      conn.write(`POST /book HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${token}\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
      assert.equal((await conn.response()).status, 100);
      service.child.kill(signal);
      conn.write(body);
      const res = await conn.response();
      assert.equal(res.status, 201);
      assert.equal((res.json?.data as { title: string }).title, 'in flight');
      conn.destroy();
      const exit = await within('the service exiting once the answer in flight is out', service.exited);
      assert.equal(exit.code, 0);
      assert.equal(exit.stderr, '');
    });
  }

  it('a log reader that goes away (EPIPE on stdout) does not stop the service', async () => {
    const cwd = await freshDir();
    const service = await startMain({ cwd, args: LOCAL, env: { SECRET_TOKEN: SECRET, AUTH_PASSWORD: PASSWORD } });
    service.child.stdout?.destroy();
    // Each request writes a log line into the closed pipe.
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${service.url}/healthz`)).status, 200);
    const exit = await service.stop();
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stderr, '');
  });

  it('a second process on the same data directory exits non-zero with a clear message', async () => {
    const cwd = await freshDir();
    const env = { SECRET_TOKEN: SECRET, AUTH_PASSWORD: PASSWORD };
    const first: RunningService = await startMain({ cwd, args: LOCAL, env });
    const second = await runMain({ cwd, args: LOCAL, env: { ...env, LOG_LEVEL: 'silent' } });
    assertOneLineFailure(second, /data directory .*data.* in use by another process/);
    assert.equal((await fetch(`${first.url}/healthz`)).status, 200, 'the first keeps serving');
    assert.equal((await first.stop()).code, 0);
  });
});
