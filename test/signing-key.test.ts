import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseCommand } from '../src/index.ts';
import { startApp, TEST_PASSWORD, TEST_USER } from './helpers/app.ts';
import { signedWith } from './helpers/token.ts';

describe('the signing key is the UTF-8 bytes of SECRET_TOKEN (docs/contract.md, "Signing key")', () => {
  // Valid hex and valid base64 at once, with a non-ASCII letter and spaces at both ends: a verifier
  // that decoded or trimmed it would get a different key.
  const secret = ' 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff é ';

  it('is written down where a verifier elsewhere looks: SECURITY.md, the README and docs/contract.md', async () => {
    const root = join(import.meta.dirname, '..');
    for (const file of ['SECURITY.md', 'README.md']) {
      assert.match((await readFile(join(root, file), 'utf8')).replace(/\s+/g, ' '), /UTF-8 bytes of `SECRET_TOKEN`/, file);
    }
    const contract = await readFile(join(root, 'docs/contract.md'), 'utf8');
    assert.match(contract, /^## Signing key\n\nThe HMAC key is the UTF-8 encoding of `SECRET_TOKEN`/m);
  });

  it('SECRET_TOKEN reaches the service as written: not trimmed, not decoded', () => {
    const command = parseCommand({ argv: [], env: { SECRET_TOKEN: secret } });
    assert.equal(command.kind, 'serve');
    assert.equal(command.kind === 'serve' ? command.config.secretToken : undefined, secret);
  });

  it('a token from POST /token verifies with exactly those bytes, and not with a decoded or trimmed key', async () => {
    const app = await startApp({ secret });
    try {
      const res = await app.request('POST', '/token', { auth: false, body: { username: TEST_USER, password: TEST_PASSWORD } });
      const { token } = res.json.data as { token: string };
      assert.equal(signedWith(token, Buffer.from(secret, 'utf8')), true);
      assert.equal(signedWith(token, Buffer.from(secret.trim(), 'utf8')), false);
      assert.equal(signedWith(token, Buffer.from(secret.trim().slice(0, 64), 'hex')), false);
      assert.equal(signedWith(token, Buffer.from(secret.trim().slice(0, 64), 'base64')), false);
      assert.equal(signedWith(token, Buffer.from(secret, 'latin1')), false, 'UTF-8, not Latin-1');
    } finally {
      await app.close();
    }
  });
});
