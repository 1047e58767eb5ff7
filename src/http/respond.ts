import type { ServerResponse } from 'node:http';
import { ANSWERS, type Answer } from './messages.ts';
import type { EnvelopeReply, PiecewiseBody } from './route.ts';
import { sendPiecewise, type PiecewiseSettings } from './piecewise-body.ts';

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
  writeBody(res, requestId, status, envelopeText(status, message, dataJson), extraHeaders);
}

/**
 * A whole body in one `end`, with the headers every answer carries: JSON unless the answer names
 * its own `content-type` (the built-in page, `GET /` and its assets: HTML, CSS, JavaScript, SVG;
 * the metrics exposition); `cache-control` is `no-store` unless the answer names its own (GET /openapi.json and the page,
 * which may be cached and revalidated). Only GET /openapi.json sends JSON without the envelope:
 * tools that read OpenAPI documents expect the document itself at its URL. Answers made ahead of
 * time pass their envelope already encoded (see `Reply.body`).
 */
export function writeBody(
  res: ServerResponse,
  requestId: string,
  status: number,
  body: string | Buffer,
  extraHeaders?: Readonly<Record<string, string>>,
): void {
  writeAnswerHead(res, requestId, status, Buffer.byteLength(body), extraHeaders);
  res.end(body);
}

/**
 * A JSON body written piece by piece (see `sendPiecewise`), with the same headers as `writeBody`'s;
 * chunked when its length is not known before it is sent.
 */
export function writePiecewiseJson(
  res: ServerResponse,
  requestId: string,
  status: number,
  body: PiecewiseBody,
  extraHeaders: Readonly<Record<string, string>> | undefined,
  settings: PiecewiseSettings,
  ended: (finished: boolean) => void,
): void {
  writeAnswerHead(res, requestId, status, body.length, extraHeaders);
  sendPiecewise(res, body, settings, ended);
}

/**
 * An answer's head as a flat [name, value, …] list (Node serializes it as it is, with no object to
 * build or walk): its content type and length when it has them, then the fields every answer
 * carries (docs/contract.md, "Envelope"): `cache-control` (`no-store` unless the answer names its
 * own), `nosniff`, and the request id. Built as one literal: the usual answer pays no resizing.
 */
export function answerHead(contentType: string | undefined, length: number | undefined, requestId: string, cacheControl = 'no-store'): (string | number)[] {
  const fields: (string | number)[] = [
    'content-type',
    contentType ?? '',
    'content-length',
    length ?? 0,
    'cache-control',
    cacheControl,
    'x-content-type-options',
    'nosniff',
    'x-request-id',
    requestId,
  ];
  // Without a length, Node sends the body chunked (HTTP/1.1) or ends it by closing the connection (1.0).
  if (length === undefined) fields.splice(2, 2);
  if (contentType === undefined) fields.splice(0, 2);
  return fields;
}

function writeAnswerHead(res: ServerResponse, requestId: string, status: number, length: number | undefined, extraHeaders: Readonly<Record<string, string>> | undefined): void {
  const headers = answerHead(extraHeaders?.['content-type'] ?? CONTENT_TYPE, length, requestId, extraHeaders?.['cache-control']);
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
  const headers = answerHead(undefined, undefined, requestId, extraHeaders?.['cache-control']);
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
  const fields = answerHead(CONTENT_TYPE, Buffer.byteLength(body), requestId);
  fields.push('connection', 'close');
  let head = `HTTP/1.1 ${status} ${reason}\r\n`;
  for (let i = 0; i < fields.length; i += 2) head += `${fields[i]}: ${fields[i + 1]}\r\n`;
  return `${head}\r\n${body}`;
}
