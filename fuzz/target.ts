import { signToken } from '../src/auth/jwt.ts';
import { startApp, TEST_PASSWORD, TEST_SECRET, TEST_USER } from '../test/helpers/app.ts';
import type { FuzzTarget } from './fuzzer.ts';

/** A fixed clock: tokens, and so whole runs, are the same on every replay of a seed. */
const CLOCK_MS = Date.UTC(2030, 0, 1);

/** The service in-process on port 0 with its own temp data dir; throttling off so logins stay fuzzable. */
export async function startFuzzTarget(): Promise<{ target: FuzzTarget; close: () => Promise<void> }> {
  const app = await startApp({ logLevel: 'silent', now: () => CLOCK_MS, loginMaxFailures: 0 });
  const token = signToken(TEST_USER, Buffer.from(TEST_SECRET), CLOCK_MS / 1000);
  return { target: { port: app.port, token, username: TEST_USER, password: TEST_PASSWORD }, close: () => app.close() };
}
