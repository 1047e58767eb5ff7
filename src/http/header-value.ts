/**
 * Optional whitespace around a header value is SP and HTAB only (RFC 9110 §5.6.3), never the other
 * characters `String.prototype.trim` strips (U+00A0, U+2028, …): a token wrapped in those is not a
 * token. Every header value the service reads is trimmed here and nowhere else.
 */
export function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value.charCodeAt(start))) start++;
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function isOws(c: number): boolean {
  return c === 32 || c === 9;
}
