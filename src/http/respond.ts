import type { ServerResponse } from 'node:http';
import { ANSWERS, type Answer } from './messages.ts';
import type { EnvelopeReply, StreamedBody } from './route.ts';
import { sendStreamed, type StreamSettings } from './stream-body.ts';

/** docs/contract.md, "Envelope": these go on every answer, whatever its status. */
const CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The only writer of the envelope `{status, message, data}` (docs/contract.md, "Envelope": key order fixed).
 * `dataJson` is already-serialized JSON so cached book text is sent without re-encoding.
 */
export function envelopeText(status: number, message: string, dataJson: string): string {
  return `${envelopeHead(status, message)}${dataJson}}`;
}

function headText(status: number, message: string): string {
  return `{"status":${status},"message":${JSON.stringify(message)},"data":`;
}

/**
 * Every answer's envelope head, made once: each message has exactly one status (messages.ts), so
 * the message names its head, and an answer costs a lookup instead of a JSON.stringify of its
 * message (docs/performance.md, "Where the microseconds go").
 */
const HEADS: ReadonlyMap<string, string> = new Map(Object.values(ANSWERS).map(({ status, message }) => [message, headText(status, message)]));

/** The envelope up to its `data` value: a streamed answer sends this, the data, then `}`. */
export function envelopeHead(status: number, message: string): string {
  return HEADS.get(message) ?? headText(status, message);
}

/**
 * The envelope reply for `answer`, built property by property. Not `{ ...answer, data }`: Node
 * 20's V8 gives every object built that way a hidden class of its own, so each answer paid for a
 * new one and the reply writer's property reads never settled (docs/performance.md, "Design choices and their measured effect").
 */
export function envelopeReply(answer: Answer, data: string, headers?: Readonly<Record<string, string>>): EnvelopeReply {
  const { status, message } = answer;
  // The pair comes from one ANSWERS entry, so it is an Answer; TypeScript cannot see that once it is taken apart.
  return (headers === undefined ? { status, message, data } : { status, message, data, headers }) as EnvelopeReply;
}

/** An envelope reply encoded once, for answers that never change or change rarely (built as `envelopeReply` is). */
export function encodedReply(answer: Answer, data: string, headers?: Readonly<Record<string, string>>): EnvelopeReply {
  const { status, message } = answer;
  const body = Buffer.from(envelopeText(status, message, data), 'utf8');
  return (headers === undefined ? { status, message, data, body } : { status, message, data, body, headers }) as EnvelopeReply;
}

/** An envelope answer: one `writeHead` and one `end`. */
export function writeEnvelope(
  res: ServerResponse,
  requestId: string,
  status: number,
  message: string,
  dataJson: string,
  extraHeaders?: Readonly<Record<string, string>>,
): void {
  writeJson(res, requestId, status, envelopeText(status, message, dataJson), extraHeaders);
}

/**
 * A JSON body with the headers every answer carries; `cache-control` is `no-store` unless the
 * answer names its own (GET /openapi.json, which may be cached and revalidated). Only GET /openapi.json sends one without the
 * envelope: tools that read OpenAPI documents expect the document itself at its URL. Answers made
 * ahead of time pass their envelope already encoded (see `Reply.body`). The built-in page (`GET /`
 * and its assets) names its own `content-type` too: the one answer that is not JSON.
 */
export function writeJson(
  res: ServerResponse,
  requestId: string,
  status: number,
  body: string | Buffer,
  extraHeaders?: Readonly<Record<string, string>>,
): void {
  writeJsonHead(res, requestId, status, Buffer.byteLength(body), extraHeaders);
  res.end(body);
}

/**
 * A JSON body written piece by piece (see `sendStreamed`), with the same headers as `writeJson`'s;
 * chunked when its length is not known before it is sent.
 */
export function writeStreamedJson(
  res: ServerResponse,
  requestId: string,
  status: number,
  body: StreamedBody,
  extraHeaders: Readonly<Record<string, string>> | undefined,
  settings: StreamSettings,
  ended: (finished: boolean) => void,
): void {
  writeJsonHead(res, requestId, status, body.length, extraHeaders);
  sendStreamed(res, body, settings, ended);
}

function writeJsonHead(res: ServerResponse, requestId: string, status: number, length: number | undefined, extraHeaders: Readonly<Record<string, string>> | undefined): void {
  // A flat [name, value, …] list: Node serializes it as is, with no object to build or walk.
  const headers: (string | number)[] = [
    'content-type',
    extraHeaders?.['content-type'] ?? CONTENT_TYPE,
    'content-length',
    length ?? 0,
    'cache-control',
    extraHeaders?.['cache-control'] ?? 'no-store',
    'x-content-type-options',
    'nosniff',
    'x-request-id',
    requestId,
  ];
  // Without it, Node sends the body chunked (HTTP/1.1) or ends it by closing the connection (1.0).
  if (length === undefined) headers.splice(2, 2);
  if (extraHeaders !== undefined) {
    for (const name in extraHeaders) if (name !== 'cache-control' && name !== 'content-type') headers.push(name, extraHeaders[name] as string);
  }
  res.writeHead(status, headers);
}

/**
 * What a 304 keeps of the 200 it stands for (RFC 9110 §15.4.5): the fields that guide a cache
 * (ETag, Cache-Control, Vary), the CORS fields a page needs to read it, and `connection`.
 * Representation metadata (Content-Type, Content-Length, Link, …) is left out, as that section asks.
 */
const NOT_MODIFIED_KEEPS = ['etag', 'vary', 'access-control-allow-origin', 'access-control-expose-headers', 'connection'] as const;

/** 304 Not Modified: no body, the client's copy is current (docs/contract.md, "Conditional requests"). */
export function writeNotModified(res: ServerResponse, requestId: string, extraHeaders: Readonly<Record<string, string>> | undefined): void {
  const headers: string[] = ['cache-control', extraHeaders?.['cache-control'] ?? 'no-store', 'x-content-type-options', 'nosniff', 'x-request-id', requestId];
  for (const name of NOT_MODIFIED_KEEPS) {
    const value = extraHeaders?.[name];
    if (value !== undefined) headers.push(name, value);
  }
  res.writeHead(304, headers);
  res.end();
}

/**
 * For a socket Node's parser gave up on (no ServerResponse exists): a complete HTTP/1.1 answer
 * with the same envelope and headers, after which the connection closes. Its request id is always
 * generated: the request's own headers were never parsed, so none of them can be trusted.
 */
export function rawEnvelope({ status, message }: Answer, reason: string, requestId: string): string {
  const body = envelopeText(status, message, 'null');
  return (
    `HTTP/1.1 ${status} ${reason}\r\n` +
    `content-type: ${CONTENT_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    `cache-control: no-store\r\nx-content-type-options: nosniff\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`
  );
}
