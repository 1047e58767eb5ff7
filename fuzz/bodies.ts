import type { Rng } from './rng.ts';

/*
 * Request bodies: valid books (so the catalogue fills up and the model has something to check)
 * and the mutations a JSON parser and a validator meet in the wild.
 */

const CHARS = ['a', 'Z', '0', ' ', '-', 'é', 'ß', 'ж', '中', '😀', '\u200b', '\u202e', '"', '\\', '/', '\t', '\u0000', '<', '&'];

export function randomText(rng: Rng, min: number, max: number): string {
  let text = '';
  const n = rng.range(min, max);
  for (let i = 0; i < n; i++) text += rng.pick(CHARS);
  return text;
}

/** A string the service must accept: not blank, at most 1000 code points. */
function validString(rng: Rng): string {
  if (rng.chance(0.05)) return '😀'.repeat(1000);
  return `${rng.pick(['T', 'ü', '书', '😀'])}${randomText(rng, 0, 40)}`;
}

export function validBook(rng: Rng): { title: string; author: string; year: number } {
  return { title: validString(rng), author: validString(rng), year: rng.range(-9999, 9999) };
}

export function validPatch(rng: Rng): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  if (rng.chance(0.5)) patch.title = validString(rng);
  if (rng.chance(0.5)) patch.author = validString(rng);
  if (rng.chance(0.5)) patch.year = rng.range(-9999, 9999);
  return patch;
}

function randomJson(rng: Rng, depth = 0): unknown {
  const kind = rng.int(depth > 3 ? 5 : 7);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1.5, 2 ** 53, -(2 ** 31), 1e21, rng.range(-20000, 20000)]);
    case 3:
    case 4:
      return randomText(rng, 0, 12);
    case 5:
      return Array.from({ length: rng.int(4) }, () => randomJson(rng, depth + 1));
    default: {
      const obj: Record<string, unknown> = {};
      for (let i = rng.int(5); i > 0; i--) obj[rng.pick(['title', 'author', 'year', 'id', 'x', randomText(rng, 1, 5)])] = randomJson(rng, depth + 1);
      return obj;
    }
  }
}

/**
 * Number literals written as text, so JSON can carry what JSON.stringify never would, split by
 * what docs/contract.md, "Books", makes of them as a year (an integer value in -9999..9999).
 */
const YEARS_ACCEPTED = ['2020.0', '1e3', '1E2', '-0', '9999', '-9999', '1e-400', '0.0'];
const YEARS_REJECTED = ['1e400', '-1e400', '9007199254740993', '123456789012345678901234567890', '0.5', '10000', '-10000', '0x10', '01', '.5', 'NaN', 'Infinity', '+1'];

/** Values of the wrong type (or blank) for each field: every one of them is a 400. */
const WRONG_TEXT = ['null', 'true', '[]', '{}', '1', '[1]', '{"a":1}', '""', '"   "', '"\\t\\n"'];
const WRONG_YEAR = ['null', 'true', '[]', '{}', '"2020"', '""', '[1]', '1.5', '"1"'];

/** What the service must answer a well-addressed request with this body: decided, or not judged. */
export type Expectation = 'accept' | 'reject' | undefined;

const INVALID_UTF8 = [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82]];

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

export type BodyMutation =
  | 'random-json'
  | 'truncated'
  | 'wrong-type'
  | 'huge-number'
  | 'deep-nesting'
  | 'invalid-utf8'
  | 'proto-keys'
  | 'bom'
  | 'duplicate-keys'
  | 'extra-fields'
  | 'edge-strings'
  | 'not-object';

const MUTATIONS: Record<BodyMutation, number> = {
  'random-json': 3,
  truncated: 2,
  'wrong-type': 3,
  'huge-number': 3,
  'deep-nesting': 1,
  'invalid-utf8': 2,
  'proto-keys': 2,
  bom: 1,
  'duplicate-keys': 1,
  'extra-fields': 2,
  'edge-strings': 2,
  'not-object': 1,
};

function bookText(rng: Rng, year: string): string {
  const b = validBook(rng);
  return `{"title":${JSON.stringify(b.title)},"author":${JSON.stringify(b.author)},"year":${year}}`;
}

function nested(rng: Rng): string {
  const depth = rng.pick([100, 1000, 10_000, 30_000]);
  if (rng.chance(0.5)) return `${'['.repeat(depth)}${']'.repeat(depth)}`;
  return `{"title":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)},"author":"x","year":1}`;
}

function withInvalidUtf8(rng: Rng): Buffer {
  const text = Buffer.from(bookText(rng, '1999'));
  const at = text.indexOf('"', 10) + 1;
  return Buffer.concat([text.subarray(0, at), Buffer.from(rng.pick(INVALID_UTF8)), text.subarray(at)]);
}

const EDGE_STRINGS: [string, Expectation][] = [
  ['""', 'reject'],
  ['" "', 'reject'],
  ['"\\t\\n\\u00a0"', 'reject'],
  ['"\\ud800"', undefined],
  ['"\\udc00x"', undefined],
  ['"\\u0000"', 'accept'],
  [JSON.stringify('x'.repeat(1001)), 'reject'],
  [JSON.stringify('😀'.repeat(1001)), 'reject'],
  [JSON.stringify('😀'.repeat(1000)), 'accept'],
  [JSON.stringify(`${'é'.repeat(999)}x`), 'accept'],
];

function edgeString(rng: Rng): { text: string; expect: Expectation } {
  const [value, expect] = rng.pick(EDGE_STRINGS);
  const field = rng.pick(['title', 'author']);
  const other = field === 'title' ? 'author' : 'title';
  return { text: `{"${field}":${value},"${other}":"ok","year":2000}`, expect };
}

export interface MutatedBody {
  kind: BodyMutation;
  body: Buffer;
  /** For a complete book (POST) or a patch of it (PUT): must it be accepted or refused? */
  expect: Expectation;
}

function wrongType(rng: Rng): string {
  const b = validBook(rng);
  const field = rng.pick(['title', 'author', 'year'] as const);
  const wrong = field === 'year' ? rng.pick(WRONG_YEAR) : rng.pick(WRONG_TEXT);
  const fields = { title: JSON.stringify(b.title), author: JSON.stringify(b.author), year: String(b.year), [field]: wrong };
  return `{"title":${fields.title},"author":${fields.author},"year":${fields.year}}`;
}

function numberYear(rng: Rng): { text: string; expect: Expectation } {
  const accepted = rng.chance(0.4);
  return { text: bookText(rng, rng.pick(accepted ? YEARS_ACCEPTED : YEARS_REJECTED)), expect: accepted ? 'accept' : 'reject' };
}

/** A body for POST /book or PUT /book/{id}; `kind` names the mutation for the figures. */
export function mutatedBody(rng: Rng): MutatedBody {
  const kind = rng.weighted(MUTATIONS);
  const text = (s: string, expect: Expectation): MutatedBody => ({ kind, body: Buffer.from(s, 'utf8'), expect });
  switch (kind) {
    case 'random-json':
      return text(JSON.stringify(randomJson(rng)), undefined);
    case 'truncated': {
      const full = JSON.stringify(validBook(rng));
      return text(full.slice(0, rng.int(full.length)), 'reject');
    }
    case 'wrong-type':
      return text(wrongType(rng), 'reject');
    case 'huge-number': {
      const year = numberYear(rng);
      return text(year.text, year.expect);
    }
    case 'deep-nesting':
      return text(nested(rng), 'reject');
    case 'invalid-utf8':
      return { kind, body: withInvalidUtf8(rng), expect: 'reject' };
    case 'proto-keys': {
      const key = rng.pick(PROTO_KEYS);
      const value = rng.pick(['{"polluted":1}', '{"prototype":{"polluted":1}}', '1', 'null', '"x"']);
      return text(`{"${key}":${value},${bookText(rng, '1984').slice(1)}`, 'accept');
    }
    case 'bom':
      return text(`\ufeff${bookText(rng, '2001')}`, 'reject');
    case 'duplicate-keys':
      return text(`{"year":"bad","title":1,${bookText(rng, '1500').slice(1)}`, 'accept');
    case 'extra-fields':
      return text(`{"id":${rng.pick(['1', '999999', '-1', '"x"'])},"extra":${JSON.stringify(randomJson(rng))},${bookText(rng, '1700').slice(1)}`, 'accept');
    case 'edge-strings': {
      const edge = edgeString(rng);
      return text(edge.text, edge.expect);
    }
    case 'not-object':
      return text(rng.pick(['', ' ', '[]', 'null', '"book"', '42', 'true', '[{"title":"a","author":"b","year":1}]']), 'reject');
  }
}
