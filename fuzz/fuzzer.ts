import { RawClient, type Answer } from './client.ts';
import { BookModel, sameJson } from './model.ts';
import { encodeRequest, nextRequest, type FuzzRequest } from './mutators.ts';
import { Rng } from './rng.ts';

export interface FuzzTarget {
  port: number;
  /** A valid bare token, and the credential pair. */
  token: string;
  username: string;
  password: string;
}

export interface FuzzOptions {
  seed: number;
  iterations: number;
  /** The model is compared with GET /books this often, and at the end. */
  checkpointEvery?: number;
}

export interface FuzzReport {
  seed: number;
  iterations: number;
  durationMs: number;
  statuses: Record<string, number>;
  kinds: Record<string, number>;
  checkpoints: number;
  connections: number;
  acknowledged: { created: number; updated: number; deleted: number };
  booksAtEnd: number;
}

/** A broken rule, with everything needed to replay it. */
export class FuzzFailure extends Error {
  readonly seed: number;
  readonly iteration: number;
  readonly request: FuzzRequest | undefined;
  readonly answer: Answer | string | undefined;
  /** The request before it on the same connection: keep-alive state can matter. */
  previous: FuzzRequest | undefined;
  constructor(seed: number, iteration: number, reason: string, request?: FuzzRequest, answer?: Answer | string) {
    super(reason);
    this.name = 'FuzzFailure';
    this.seed = seed;
    this.iteration = iteration;
    this.request = request;
    this.answer = answer;
    this.previous = undefined;
  }
}

const ENVELOPE_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;

/** The one answer that is a document rather than the envelope (the OpenAPI description). */
const DOCUMENT = /^\/openapi\.json\/?(\?|$)/;

/** decisions.md: every answer is the envelope, 2xx or 4xx, never 5xx and never anything else. */
function envelopeProblem(answer: Answer, head: boolean, document: boolean): { problem?: string; data?: unknown } {
  const { status } = answer;
  if (!((status >= 200 && status < 300) || (status >= 400 && status < 500))) return { problem: `status ${status}` };
  for (const [name, value] of Object.entries(ENVELOPE_HEADERS)) {
    if (answer.headers[name] !== value) return { problem: `${name} is ${answer.headers[name]}` };
  }
  if (head) return answer.body.length === 0 ? {} : { problem: 'HEAD answer has a body' };
  if (document) return {};
  let json: unknown;
  try {
    json = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return { problem: 'body is not JSON' };
  }
  const env = json as { status?: unknown; message?: unknown; data?: unknown };
  if (typeof json !== 'object' || json === null || Object.keys(json).join() !== 'status,message,data') return { problem: 'body is not the envelope' };
  if (env.status !== status) return { problem: `envelope status ${String(env.status)} ≠ HTTP ${status}` };
  if (typeof env.message !== 'string' || env.message === '') return { problem: 'envelope message is not a string' };
  if (status >= 400 && env.data !== null) return { problem: 'error with data' };
  return { data: env.data };
}

function count(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

/** Runs `iterations` seeded requests; throws FuzzFailure at the first broken rule. */
export async function fuzz(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const { seed, iterations } = options;
  const every = options.checkpointEvery ?? 100;
  const rng = new Rng(seed);
  const client = new RawClient(target.port);
  const model = new BookModel();
  const report: FuzzReport = { seed, iterations, durationMs: 0, statuses: {}, kinds: {}, checkpoints: 0, connections: 0, acknowledged: model.acknowledged, booksAtEnd: 0 };
  const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).join();
  const started = performance.now();

  const checkpoint = async (iteration: number): Promise<void> => {
    const fail = (reason: string, answer?: Answer | string): FuzzFailure => new FuzzFailure(seed, iteration, `checkpoint: ${reason}`, undefined, answer);
    const list = await client.send(Buffer.from(`GET /books HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${target.token}\r\n\r\n`), false);
    if (typeof list === 'string' || list.status !== 200) throw fail('GET /books did not answer 200', list);
    const problem = sameJson((JSON.parse(list.body.toString()) as { data: unknown }).data, model.list(), 'GET /books');
    if (problem !== undefined) throw fail(problem);
    if (Object.getOwnPropertyNames(Object.prototype).join() !== prototypeKeys) throw fail('Object.prototype was polluted');
    report.checkpoints++;
  };

  let previous: FuzzRequest | undefined;
  try {
    for (let i = 0; i < iterations; i++) {
      const ids = [...model.books.keys()];
      const req = nextRequest(rng, { token: target.token, ids, nextId: model.highestId + 1, username: target.username, password: target.password });
      count(report.kinds, req.kind);
      const head = req.method === 'HEAD';
      const connection = client.opened;
      const answer = await client.send(encodeRequest(req), head);
      const fail = (reason: string): FuzzFailure => Object.assign(new FuzzFailure(seed, i, reason, req, answer), { previous: client.opened === connection ? previous : undefined });
      if (typeof answer === 'string') throw fail(answer);
      count(report.statuses, String(answer.status));
      const { problem, data } = envelopeProblem(answer, head, answer.status === 200 && DOCUMENT.test(req.path));
      const wrong = problem ?? model.expectation(req, answer.status) ?? model.apply(req, answer, data);
      if (wrong !== undefined) throw fail(wrong);
      previous = client.isOpen ? req : undefined;
      if ((i + 1) % every === 0) {
        await checkpoint(i);
        previous = undefined;
      }
    }
    await checkpoint(iterations);
  } finally {
    client.close();
  }
  report.durationMs = Math.round(performance.now() - started);
  report.connections = client.opened;
  report.booksAtEnd = model.books.size;
  return report;
}

/** The failure as text: seed, iteration, request bytes and answer, and the command that replays it. */
export function describeFailure(f: FuzzFailure): string {
  const lines = [`FUZZ FAILURE at iteration ${f.iteration} (seed ${f.seed}): ${f.message}`];
  if (f.request !== undefined) {
    const bytes = encodeRequest(f.request);
    lines.push(`kind: ${f.request.kind}`, `request (${bytes.length} bytes, latin1): ${JSON.stringify(bytes.subarray(0, 2048).toString('latin1'))}`);
  }
  if (f.previous !== undefined) lines.push(`after, on the same connection: ${JSON.stringify(encodeRequest(f.previous).subarray(0, 2048).toString('latin1'))}`);
  if (f.answer !== undefined && typeof f.answer !== 'string') {
    lines.push(`answer: ${f.answer.status} ${JSON.stringify(f.answer.headers)} ${JSON.stringify(f.answer.body.subarray(0, 500).toString())}`);
  }
  lines.push(`replay: npm run fuzz -- --seed ${f.seed} --iterations ${f.iteration + 1}`);
  return lines.join('\n');
}
