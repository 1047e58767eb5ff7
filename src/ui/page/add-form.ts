import { FIELD_LABELS, FIELDS, type Problems, type Typed } from './book-input.ts';
import { say } from './dom.ts';
import { focusFirstProblem, showProblems, typedIn, type BookInputs } from './fields-view.ts';
import type { AppState } from './state.ts';

export interface AddFormElements {
  readonly form: HTMLFormElement;
  readonly inputs: BookInputs;
  /** role=alert under the form: which fields to fix, or the service's own message. */
  readonly error: HTMLElement;
}

export interface AddFormHandlers {
  add(typed: Typed): Promise<'invalid' | 'refused' | 'added'>;
}

export interface AddFormView {
  render(state: AppState): void;
  reset(): void;
}

/** "Not sent: check Author and Year." */
function problemsSummary(problems: Problems): string {
  const names = FIELDS.filter((field) => problems[field] !== undefined).map((field) => FIELD_LABELS[field]);
  if (names.length === 0) return '';
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  return `Not sent: check ${list}.`;
}

export function createAddForm(elements: AddFormElements, handlers: AddFormHandlers): AddFormView {
  const { form, inputs, error } = elements;
  let shown: Problems = {};
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void handlers.add(typedIn(inputs)).then((outcome) => {
      if (outcome === 'invalid') focusFirstProblem(inputs, shown);
      if (outcome !== 'added') return;
      form.reset();
      // Ready for the next book; the list, not the form, is scrolled to show the one just added.
      inputs.title.input.focus({ preventScroll: true });
    });
  });
  return {
    render(state) {
      shown = state.add.problems;
      showProblems(inputs, shown);
      say(error, state.add.error !== '' ? state.add.error : problemsSummary(shown));
    },
    reset() {
      form.reset();
    },
  };
}
