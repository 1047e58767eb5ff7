/**
 * The scenarios of `npm run bench` (docs/performance.md), each a list of complete HTTP/1.1 requests built before the clock
 * starts. The same bytes go to the service and to the ceiling server.
 */
export interface ScenarioContext {
  /** `host:port` for the Host header. */
  host: string;
  token: string;
  username: string;
  password: string;
  /** Ids of existing books (read-one and update pick among them). */
  bookIds: readonly number[];
}

export interface Scenario {
  readonly name: string;
  readonly description: string;
  /** The status every answer of the service should carry. */
  readonly expectedStatus: number;
  build(ctx: ScenarioContext): Buffer[];
}

/** Enough distinct requests that random ids do not repeat in a short cycle. */
const VARIANTS = 1024;

export function httpRequest(method: string, path: string, host: string, headers: Readonly<Record<string, string>>, body?: string): Buffer {
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (body === undefined) return Buffer.from(`${head}\r\n`, 'utf8');
  const bytes = Buffer.from(body, 'utf8');
  head += `content-type: application/json\r\ncontent-length: ${bytes.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'utf8'), bytes]);
}

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}

function times(n: number, make: (i: number) => Buffer): Buffer[] {
  return Array.from({ length: n }, (_, i) => make(i));
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'read-one',
    description: 'GET /book/{random existing id}, token',
    expectedStatus: 200,
    build: (c) => times(VARIANTS, () => httpRequest('GET', `/book/${pick(c.bookIds)}`, c.host, { authorization: c.token })),
  },
  {
    name: 'list-100',
    description: 'GET /books with 100 books, token',
    expectedStatus: 200,
    build: (c) => [httpRequest('GET', '/books', c.host, { authorization: c.token })],
  },
  {
    name: 'token',
    description: 'POST /token, valid credentials',
    expectedStatus: 200,
    build: (c) => [httpRequest('POST', '/token', c.host, {}, JSON.stringify({ username: c.username, password: c.password }))],
  },
  {
    name: 'unauth',
    description: 'GET /books without a token (401)',
    expectedStatus: 401,
    build: (c) => [httpRequest('GET', '/books', c.host, {})],
  },
  {
    name: 'update',
    description: 'PUT /book/{random existing id}, durable',
    expectedStatus: 200,
    build: (c) =>
      times(VARIANTS, (i) =>
        httpRequest('PUT', `/book/${pick(c.bookIds)}`, c.host, { authorization: c.token }, JSON.stringify({ year: 1900 + (i % 125) })),
      ),
  },
  {
    name: 'create',
    description: 'POST /book, durable',
    expectedStatus: 201,
    build: (c) =>
      times(VARIANTS, (i) =>
        httpRequest('POST', '/book', c.host, { authorization: c.token }, JSON.stringify({ title: `Bench book ${i}`, author: 'Load Generator', year: 1900 + (i % 125) })),
      ),
  },
];

/**
 * The scenarios `names` names, in SCENARIOS' order; a name neither SCENARIOS nor `others` (a
 * bench's own, such as fanout) holds stops the bench, listing the known ones.
 */
export function scenariosNamed(names: readonly string[], others: readonly string[] = []): Scenario[] {
  const unknown = names.filter((name) => !others.includes(name) && !SCENARIOS.some((s) => s.name === name));
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')} (known: ${[...SCENARIOS.map((s) => s.name), ...others].join(', ')})`);
  return SCENARIOS.filter((s) => names.includes(s.name));
}

/** The book every seeded slot holds: list-100 answers with 100 of these. */
export function seedBook(i: number): { title: string; author: string; year: number } {
  return { title: `Seeded book ${i}`, author: `Author ${i % 17}`, year: 1950 + (i % 70) };
}
