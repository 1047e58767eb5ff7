import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnswerFramer } from './answer-framer.ts';
import { SCENARIOS, seedBook } from './scenarios.ts';

/**
 * One side of `npm run bench:paired` (bench/paired.ts): `<dist> <scenario> <requests>
 * <warmup>` loads the library from a build's dist/, serves it in this process on a fresh data
 * directory, seeds 100 books, sends the scenario's requests one at a time on one keep-alive socket
 * and prints this process's CPU µs per answer (the client's share is the same for both builds).
 */
interface LibraryBuild {
  openStore(dir: string, options: object): Promise<{ close(): Promise<void> }>;
  createServer(options: object): { shutdown(graceMs: number): Promise<unknown> };
  listen(server: unknown, port: number, host: string): Promise<{ port: number }>;
}

const [dist, scenarioName, requests, warmup] = process.argv.slice(2) as [string, string, string, string];

/** Sends `count` requests, cycling through `built`, each once the previous answer is whole; rejects on another status. */
function exchange(socket: Socket, built: readonly Buffer[], count: number, expected: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    const next = (): void => {
      socket.write(built[sent % built.length] as Buffer);
      sent++;
    };
    const framer = new AnswerFramer((answered) => {
      const status = Number(answered);
      if (status !== expected) {
        socket.off('data', onData);
        reject(new Error(`${scenarioName}: status ${status}, expected ${expected}`));
      } else if (sent < count) next();
      else {
        socket.off('data', onData);
        resolve();
      }
    });
    const onData = (chunk: Buffer): void => framer.read(chunk);
    socket.on('data', onData);
    next();
  });
}

async function main(): Promise<void> {
  const scenario = SCENARIOS.find((s) => s.name === scenarioName);
  if (scenario === undefined) throw new Error(`unknown scenario ${scenarioName}`);
  const lib = (await import(join(dist, 'index.js'))) as LibraryBuild;
  const dir = await mkdtemp(join(tmpdir(), 'book-catalogue-paired-'));
  const credentials = { username: 'bench', password: 'bench-password' };
  const store = await lib.openStore(dir, {});
  const server = lib.createServer({ store, secret: 'in-process bench secret, 32 bytes or more', ...credentials });
  const { port } = await lib.listen(server, 0, '127.0.0.1');
  const base = `http://127.0.0.1:${port}`;
  const post = async (path: string, body: object, token?: string): Promise<{ data: { token: string; id: number } }> => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token !== undefined && { authorization: token }) }, body: JSON.stringify(body) });
    return (await res.json()) as { data: { token: string; id: number } };
  };
  const { token } = (await post('/token', credentials)).data;
  const bookIds: number[] = [];
  for (let i = 0; i < 100; i++) bookIds.push((await post('/book', seedBook(i), token)).data.id);
  const built = scenario.build({ host: `127.0.0.1:${port}`, token, ...credentials, bookIds });
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  await exchange(socket, built, Number(warmup), scenario.expectedStatus);
  const before = process.cpuUsage();
  await exchange(socket, built, Number(requests), scenario.expectedStatus);
  const used = process.cpuUsage(before);
  process.stdout.write(`${((used.user + used.system) / Number(requests)).toFixed(2)}\n`);
  socket.destroy();
  await server.shutdown(100);
  await store.close();
  await rm(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench paired: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
