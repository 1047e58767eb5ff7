import { trimOws } from './header-value.ts';

/**
 * Whether a Content-Type names JSON: `application/json` or any `type/subtype+json` (RFC 6839 §3.1),
 * in any case, parameters ignored. None of these is a type a page on another origin may send
 * without a CORS preflight (Fetch standard, "CORS-safelisted request-header").
 */
export function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const semicolon = header.indexOf(';');
  const essence = trimOws(semicolon === -1 ? header : header.slice(0, semicolon)).toLowerCase();
  const slash = essence.indexOf('/');
  if (slash <= 0 || slash === essence.length - 1 || essence.indexOf('/', slash + 1) !== -1) return false;
  return essence === 'application/json' || (essence.endsWith('+json') && essence.length - slash > 6);
}
