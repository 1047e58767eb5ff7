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

export interface FailureDetails {
  request?: FuzzRequest;
  answer?: Answer | string;
  /** The request before it on the same connection: keep-alive state can matter. */
  previous?: FuzzRequest | undefined;
}

/** A broken rule, with everything needed to replay it. */
export class FuzzFailure extends Error {
  readonly seed: number;
  readonly iteration: number;
  readonly details: FailureDetails;
  constructor(seed: number, iteration: number, reason: string, details: FailureDetails = {}) {
    super(reason);
    this.name = 'FuzzFailure';
    this.seed = seed;
    this.iteration = iteration;
    this.details = details;
  }
}

const ENVELOPE_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;

/** The one answer that is a document rather than the envelope (the OpenAPI description). */
const DOCUMENT = /^\/openapi\.json\/?(\?|$)/;

/** docs/contract.md, "Envelope": every answer is the envelope, 2xx or 4xx, never 5xx and never anything else. */
function envelopeProblem(answer: Answer, head: boolean, document: boolean): { problem?: string; data?: unknown } {
  const { status } = answer;
  if (!((status >= 200 && status < 300) || (status >= 400 && status < 500))) return { problem: `status ${status}` };
  for (const [name, value] of Object.entries(ENVELOPE_HEADERS)) {
    // docs/contract.md, "Operations endpoints": the OpenAPI document is revalidated by its ETag, not no-store.
    const expected = document && name === 'cache-control' ? 'no-cache' : value;
    if (answer.headers[name] !== expected) return { problem: `${name} is ${answer.headers[name]}` };
  }
  if (head) return answer.body.length === 0 ? {} : { problem: 'HEAD answer has a body' };
  if (document) return {};
  const json = answer.json;
  if (json === undefined) return { problem: 'body is not JSON' };
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

/** Everything wrong with one answer (the envelope, the body oracle, the model), or undefined. */
function answerProblem(req: FuzzRequest, answer: Answer | string, model: BookModel): string | undefined {
  if (typeof answer === 'string') return answer;
  const { problem, data } = envelopeProblem(answer, req.method === 'HEAD', answer.status === 200 && DOCUMENT.test(req.path));
  return problem ?? model.expectation(req, answer.status) ?? model.apply(req, answer, data);
}

/** GET /books must equal the model, and Object.prototype must be what it was at the start. */
async function checkpointProblem(client: RawClient, token: string, model: BookModel, prototypeKeys: string): Promise<string | undefined> {
  const list = await client.send(Buffer.from(`GET /books HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${token}\r\n\r\n`), false);
  if (typeof list === 'string') return `GET /books: ${list}`;
  if (list.status !== 200) return `GET /books answered ${list.status}`;
  const polluted = Object.getOwnPropertyNames(Object.prototype).join() !== prototypeKeys;
  return sameJson(list.json?.data, model.list(), 'GET /books') ?? (polluted ? 'Object.prototype was polluted' : undefined);
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
    const problem = await checkpointProblem(client, target.token, model, prototypeKeys);
    if (problem !== undefined) throw new FuzzFailure(seed, iteration, `checkpoint: ${problem}`);
    report.checkpoints++;
  };
  let previous: FuzzRequest | undefined;
  try {
    for (let i = 0; i < iterations; i++) {
      const context = { token: target.token, ids: [...model.books.keys()], nextId: model.highestId + 1, username: target.username, password: target.password };
      const req = nextRequest(rng, context);
      count(report.kinds, req.kind);
      const connection = client.opened;
      const answer = await client.send(encodeRequest(req), req.method === 'HEAD');
      if (typeof answer !== 'string') count(report.statuses, String(answer.status));
      const wrong = answerProblem(req, answer, model);
      if (wrong !== undefined) throw new FuzzFailure(seed, i, wrong, { request: req, answer, previous: client.opened === connection ? previous : undefined });
      previous = client.isOpen ? req : undefined;
      if ((i + 1) % every === 0) {
        await checkpoint(i);
        previous = undefined;
      }
    }
    await checkpoint(iterations - 1);
  } finally {
    client.close();
  }
  return { ...report, durationMs: Math.round(performance.now() - started), connections: client.opened, booksAtEnd: model.books.size };
}

/** The failure as text: seed, iteration, request bytes and answer, and the command that replays it. */
export function describeFailure(f: FuzzFailure): string {
  const { request, answer, previous } = f.details;
  const text = (r: FuzzRequest): string => JSON.stringify(encodeRequest(r).subarray(0, 2048).toString('latin1'));
  const lines = [`FUZZ FAILURE at iteration ${f.iteration} (seed ${f.seed}): ${f.message}`];
  if (request !== undefined) lines.push(`kind: ${request.kind}`, `request (${encodeRequest(request).length} bytes, latin1, first 2 KiB): ${text(request)}`);
  if (previous !== undefined) lines.push(`after, on the same connection: ${text(previous)}`);
  if (answer !== undefined && typeof answer !== 'string') lines.push(`answer: ${answer.status} ${JSON.stringify(answer.headers)} ${JSON.stringify(answer.body.slice(0, 500))}`);
  lines.push(`replay: npm run fuzz -- --seed ${f.seed} --iterations ${f.iteration + 1}`);
  return lines.join('\n');
}
