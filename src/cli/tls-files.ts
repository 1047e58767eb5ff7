import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../faults.ts';

/**
 * Reads the PEM certificate chain and key once at startup and checks them the way OpenSSL will
 * use them, so that a bad file stops startup with one line naming it instead of a bare OpenSSL
 * code: unreadable, not a certificate, not a private key, or a key that is not the certificate's.
 */
export function readTlsFiles(files: { certFile: string; keyFile: string }): { cert: Buffer; key: Buffer } {
  const cert = read('certificate', files.certFile);
  const key = read('key', files.keyFile);
  let certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (err) {
    throw new ConfigError(`TLS certificate ${files.certFile} is not a PEM certificate: ${reason(err)}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new ConfigError(`TLS key ${files.keyFile} is not a PEM private key (unencrypted): ${reason(err)}`);
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(`TLS key ${files.keyFile} does not belong to the certificate in ${files.certFile}`);
  }
  return { cert, key };
}

function read(what: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`cannot read TLS ${what} ${file}: ${reason(err)}`);
  }
}

function reason(err: unknown): string {
  return (err as Error).message;
}
