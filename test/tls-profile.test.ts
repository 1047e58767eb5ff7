import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { connect, type ConnectionOptions } from 'node:tls';
import { startApp, type TestApp } from './helpers/app.ts';

/* The fixture certificate (test/fixtures/tls) has an EC key, so the ECDSA suites apply. */
const FIXTURES = new URL('./fixtures/tls/', import.meta.url);
const CERT = readFileSync(new URL('cert.pem', FIXTURES));
const KEY = readFileSync(new URL('key.pem', FIXTURES));

/** Resolves with the negotiated protocol and cipher, or rejects when the handshake fails. */
function handshake(port: number, options: ConnectionOptions): Promise<{ protocol: string | null; cipher: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca: CERT, ...options }, () => {
      const result = { protocol: socket.getProtocol(), cipher: socket.getCipher().name };
      socket.destroy();
      resolve(result);
    });
    socket.once('error', reject);
  });
}

describe('TLS offers only the intermediate profile: TLS 1.2+, ECDHE with AEAD', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent', tls: { cert: CERT, key: KEY } });
  });
  after(() => app.close());

  it('a default client gets TLS 1.3', async () => {
    assert.equal((await handshake(app.port, {})).protocol, 'TLSv1.3');
  });

  it('a TLS 1.2 client gets an ECDHE AEAD suite', async () => {
    const { protocol, cipher } = await handshake(app.port, { maxVersion: 'TLSv1.2' });
    assert.equal(protocol, 'TLSv1.2');
    assert.match(cipher, /^ECDHE-ECDSA-(AES\d+-GCM-SHA\d+|CHACHA20-POLY1305)$/);
  });

  for (const cipher of ['AES128-SHA', 'AES256-SHA', 'ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES128-SHA256', 'AES128-GCM-SHA256']) {
    it(`a TLS 1.2 client offering only ${cipher} (no forward secrecy, or CBC) is refused`, async () => {
      await assert.rejects(handshake(app.port, { maxVersion: 'TLSv1.2', ciphers: cipher }));
    });
  }

  it('a TLS 1.1 client is refused', async () => {
    await assert.rejects(handshake(app.port, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }));
  });
});
