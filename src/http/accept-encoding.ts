import { trimOws } from './header-value.ts';

/** RFC 9110 §12.4.2: `0` to `1` with at most three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** The last header value asked about, and its answer: a client sends the same value on every request. */
let lastHeader = '';
let lastAnswer = false;

/**
 * Whether a request with this `Accept-Encoding` value takes a gzip-encoded answer (RFC 9110
 * §12.5.3): gzip's weight is above 0 and not below identity's. Gzip's is its entry's (or
 * `x-gzip`'s, §8.4.1.3), else `*`'s, else 0: a coding not listed is not acceptable. Identity's is
 * its entry's, else `*`'s, else the lowest weight listed, else 1: the RFC makes it acceptable
 * unless excluded without ranking it, and ranked with the least wanted coding listed it never
 * outranks one the client names (`gzip;q=0.8` alone asks for gzip). So `gzip;q=0` and `*;q=0`
 * refuse gzip, `*` takes it, and `gzip;q=0.5, identity` prefers the answer as it is. Codings are
 * compared without regard to case; an entry whose weight is not a qvalue is ignored; an empty
 * value asks for no coding at all. When identity is refused too (`identity;q=0` without gzip), the
 * answer goes as it is all the same, as §12.1 lets a server do rather than refuse it.
 */
export function acceptsGzip(header: string): boolean {
  if (header === lastHeader) return lastAnswer;
  let gzip = -1;
  let identity = -1;
  let any = -1;
  let lowest = 1;
  for (const entry of header.split(',')) {
    const semicolon = entry.indexOf(';');
    const coding = trimOws(semicolon === -1 ? entry : entry.slice(0, semicolon)).toLowerCase();
    const weight = semicolon === -1 ? 1 : weightOf(entry.slice(semicolon + 1));
    if (coding === '' || weight === undefined) continue;
    lowest = Math.min(lowest, weight);
    if (coding === 'gzip' || coding === 'x-gzip') gzip = Math.max(gzip, weight);
    else if (coding === 'identity') identity = Math.max(identity, weight);
    else if (coding === '*') any = Math.max(any, weight);
  }
  const gzipWeight = gzip !== -1 ? gzip : any !== -1 ? any : 0;
  const identityWeight = identity !== -1 ? identity : any !== -1 ? any : lowest;
  lastHeader = header;
  lastAnswer = gzipWeight > 0 && gzipWeight >= identityWeight;
  return lastAnswer;
}

/** The `q` parameter of an entry's parameters (1 without one); undefined when it is not a qvalue. */
function weightOf(parameters: string): number | undefined {
  for (const parameter of parameters.split(';')) {
    const equals = parameter.indexOf('=');
    if (equals === -1 || trimOws(parameter.slice(0, equals)).toLowerCase() !== 'q') continue;
    const value = trimOws(parameter.slice(equals + 1));
    return QVALUE.test(value) ? Number(value) : undefined;
  }
  return 1;
}
