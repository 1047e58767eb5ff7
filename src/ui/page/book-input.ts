import type { BookFields, BookPatch } from '../../model/book.ts';
import { FIELD_RULES, validField } from '../../model/book-rule.ts';

/**
 * What a person typed into a book form, read by the service's own rule (src/model/book-rule.ts,
 * built into the page), so a field that breaks it is named with its rule before anything is sent.
 * No DOM here: test/ui-book-input.test.ts runs it in Node.
 */
export type FieldName = keyof BookFields;
export const FIELDS: readonly FieldName[] = ['title', 'author', 'year'];
export const FIELD_LABELS: Readonly<Record<FieldName, string>> = { title: 'Title', author: 'Author', year: 'Year' };

/** The text of each input. */
export type Typed = Readonly<Record<FieldName, string>>;
/** For each field that breaks the rule, what to tell the person. */
export type Problems = Partial<Record<FieldName, string>>;

/**
 * The year as typed: whole-number digits become that number; anything else stays text, which the
 * rule refuses (so `1965.5` or `MCMLXV` are named as not valid rather than rounded or guessed).
 */
function yearOf(text: string): number | string {
  const trimmed = text.trim();
  return /^[-+]?\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}

export type Reading = { readonly fields: BookFields } | { readonly problems: Problems };

export function readBook(typed: Typed): Reading {
  const fields = { title: typed.title, author: typed.author, year: yearOf(typed.year) };
  const problems: Problems = {};
  for (const field of FIELDS) {
    if (validField(field, fields[field])) continue;
    problems[field] = `${FIELD_LABELS[field]} ${typed[field].trim() === '' ? 'is missing' : 'is not valid'}: ${FIELD_RULES[field]}.`;
  }
  return FIELDS.some((field) => problems[field] !== undefined) ? { problems } : { fields: fields as BookFields };
}

/** The fields of `fields` that differ from `base`: all a PUT needs to send. */
export function changedFields(base: BookFields, fields: BookFields): BookPatch {
  const patch: { title?: string; author?: string; year?: number } = {};
  if (fields.title !== base.title) patch.title = fields.title;
  if (fields.author !== base.author) patch.author = fields.author;
  if (fields.year !== base.year) patch.year = fields.year;
  return patch;
}

export function changedNames(patch: BookPatch): FieldName[] {
  return FIELDS.filter((field) => patch[field] !== undefined);
}
