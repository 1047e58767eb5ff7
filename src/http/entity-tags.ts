import { trimOws } from './header-value.ts';

/**
 * Whether a list of entity tags (If-Match, If-None-Match: `*` or `tag, tag, …`, RFC 9110 §13.1)
 * names `current`. Strong comparison (If-Match) never matches a weak tag `W/"…"`; weak comparison
 * (If-None-Match) ignores the `W/` on either side.
 */
export function entityTagListMatches(header: string, current: string, comparison: 'strong' | 'weak'): boolean {
  const value = trimOws(header);
  if (value === '*') return true;
  const wanted = comparison === 'weak' ? opaque(current) : current;
  for (const entry of value.split(',')) {
    const tag = trimOws(entry);
    if ((comparison === 'weak' ? opaque(tag) : tag) === wanted) return true;
  }
  return false;
}

function opaque(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
