import type { ServerResponse } from 'node:http';

/** decisions.md, "Bodies and transport": these go on every answer, whatever its status. */
const CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The only writer of the envelope `{status, message, data}` (spec §2, key order fixed).
 * `dataJson` is already-serialized JSON so cached book text is sent without re-encoding.
 * One `writeHead` and one `end` per answer.
 */
export function writeEnvelope(
  res: ServerResponse,
  requestId: string,
  status: number,
  message: string,
  dataJson: string,
  extraHeaders?: Readonly<Record<string, string>>,
): void {
  const body =
    dataJson.length >= ENCODED_MIN_CHARS
      ? encodedEnvelope(status, message, dataJson)
      : `{"status":${status},"message":${JSON.stringify(message)},"data":${dataJson}}`;
  writeJson(res, requestId, status, body, extraHeaders);
}

/** Below this, building the text each time is cheaper than comparing it with the last one. */
const ENCODED_MIN_CHARS = 1024;
let last = { status: 0, message: '', dataJson: '', bytes: Buffer.alloc(0) };

/**
 * GET /books sends the store's cached list text until a book changes: its envelope is kept as
 * UTF-8 bytes, so a repeat costs one comparison (the same string object: a pointer check) instead
 * of building, measuring and encoding kilobytes per answer.
 */
function encodedEnvelope(status: number, message: string, dataJson: string): Buffer {
  if (dataJson !== last.dataJson || status !== last.status || message !== last.message) {
    const bytes = Buffer.from(`{"status":${status},"message":${JSON.stringify(message)},"data":${dataJson}}`, 'utf8');
    last = { status, message, dataJson, bytes };
  }
  return last.bytes;
}

/**
 * A JSON body with the headers every answer carries. Only GET /openapi.json sends one without the
 * envelope: tools that read OpenAPI documents expect the document itself at its URL.
 */
export function writeJson(
  res: ServerResponse,
  requestId: string,
  status: number,
  body: string | Buffer,
  extraHeaders?: Readonly<Record<string, string>>,
): void {
  // A flat [name, value, …] list: Node serializes it as is, with no object to build or walk.
  const headers: (string | number)[] = [
    'content-type',
    CONTENT_TYPE,
    'content-length',
    Buffer.byteLength(body),
    'cache-control',
    'no-store',
    'x-content-type-options',
    'nosniff',
    'x-request-id',
    requestId,
  ];
  if (extraHeaders !== undefined) {
    for (const name in extraHeaders) headers.push(name, extraHeaders[name] as string);
  }
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * For a socket Node's parser gave up on (no ServerResponse exists): a complete HTTP/1.1 answer
 * with the same envelope and headers, after which the connection closes.
 */
export function rawEnvelope(status: number, reason: string, message: string): string {
  const body = `{"status":${status},"message":${JSON.stringify(message)},"data":null}`;
  return (
    `HTTP/1.1 ${status} ${reason}\r\n` +
    `content-type: ${CONTENT_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    `cache-control: no-store\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`
  );
}
