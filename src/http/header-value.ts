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

/**
 * A Vary value naming `names` too (RFC 9110 §12.5.5: a list of field names, matched without regard
 * to case): each one the list lacks is added at its end. Every answer that varies on a field
 * (Origin and a preflight's request fields for CORS, Accept-Encoding for its coding) adds it here.
 */
export function addVary(vary: string | undefined, names: string): string {
  if (vary === undefined) return names;
  let merged = vary;
  const listed = vary.split(',').map((name) => trimOws(name).toLowerCase());
  for (const name of names.split(',')) {
    const field = trimOws(name);
    if (!listed.includes(field.toLowerCase())) merged += `, ${field}`;
  }
  return merged;
}
