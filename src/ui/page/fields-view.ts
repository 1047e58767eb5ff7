import type { BookFields } from '../../model/book.ts';
import { FIELDS, type FieldName, type Problems, type Typed } from './book-input.ts';
import { say } from './dom.ts';

/** A form's three book fields, each with the line under it that names what is wrong with it. */
export type BookInputs = Readonly<Record<FieldName, { readonly input: HTMLInputElement; readonly problem: HTMLElement }>>;

export function typedIn(inputs: BookInputs): Typed {
  return { title: inputs.title.input.value, author: inputs.author.input.value, year: inputs.year.input.value };
}

/** Each field's problem under it, and aria-invalid on its input (its aria-describedby reads the problem). */
export function showProblems(inputs: BookInputs, problems: Problems): void {
  for (const field of FIELDS) {
    const problem = problems[field] ?? '';
    say(inputs[field].problem, problem);
    if (problem === '') inputs[field].input.removeAttribute('aria-invalid');
    else inputs[field].input.setAttribute('aria-invalid', 'true');
  }
}

/** The first field with a problem gets the focus, so the person starts where the fix is. */
export function focusFirstProblem(inputs: BookInputs, problems: Problems): void {
  const first = FIELDS.find((field) => problems[field] !== undefined);
  if (first !== undefined) inputs[first].input.focus();
}

export function fill(inputs: BookInputs, book: BookFields, fields: readonly FieldName[] = FIELDS): void {
  for (const field of fields) inputs[field].input.value = String(book[field]);
}
