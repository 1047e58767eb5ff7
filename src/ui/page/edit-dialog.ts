import type { Book, BookFields } from '../../model/book.ts';
import { changedNames, FIELD_LABELS, FIELDS, type FieldName, type Typed } from './book-input.ts';
import { element, say } from './dom.ts';
import { fill, focusFirstProblem, showProblems, typedIn, type BookInputs } from './fields-view.ts';
import type { AppState, Conflict } from './state.ts';

export interface EditDialogElements {
  readonly dialog: HTMLDialogElement;
  readonly form: HTMLFormElement;
  readonly inputs: BookInputs;
  readonly error: HTMLElement;
  readonly save: HTMLButtonElement;
  readonly cancel: HTMLButtonElement;
  readonly conflict: {
    readonly panel: HTMLElement;
    /** The version saved meanwhile. */
    readonly current: HTMLElement;
    /** What applying would change, in words, and each change. */
    readonly plan: HTMLElement;
    readonly changes: HTMLElement;
    readonly reapply: HTMLButtonElement;
    readonly discard: HTMLButtonElement;
  };
}

export interface EditDialogHandlers {
  save(typed: Typed): Promise<'invalid' | 'refused' | 'conflict' | 'saved'>;
  /** Cancel, Escape: the dialog closes and the list stays as it is. */
  close(): void;
  /** After a conflict: close, show the book as it is now, and give the focus back to its row. */
  discard(): void;
  /** The edit of book `id` ended with a save: the focus goes back to its row. */
  saved(id: number): void;
}

const quoted = (book: BookFields, field: FieldName): string => (field === 'year' ? String(book.year) : `“${book[field]}”`);

/** The edit dialog: the form, and after a 412 the version saved meanwhile and what applying would change. */
export function createEditDialog(elements: EditDialogElements, handlers: EditDialogHandlers): { render(state: AppState, previous: AppState): void } {
  const { dialog, form, inputs, error, save, cancel, conflict } = elements;
  let editing: number | undefined;

  const send = (): void => {
    const id = editing;
    void handlers.save(typedIn(inputs)).then((outcome) => {
      if (outcome === 'saved' && id !== undefined) handlers.saved(id);
    });
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    send();
  });
  conflict.reapply.addEventListener('click', send);
  conflict.discard.addEventListener('click', () => handlers.discard());
  cancel.addEventListener('click', () => handlers.close());
  // Escape closes the dialog itself; the state follows.
  dialog.addEventListener('close', () => handlers.close());

  /** No conflict shown: the plain Save is the way on. */
  function hideConflict(): void {
    conflict.panel.hidden = true;
    save.hidden = false;
  }

  /** `current`: the version saved meanwhile, which the form now starts from (the edit's base). */
  function showConflict(current: Book, { mine, overwrites }: Conflict): void {
    const changing = changedNames(mine);
    // The fields this person did not change now show the version saved meanwhile: what Save would keep.
    fill(inputs, current, FIELDS.filter((field) => !changing.includes(field)));
    conflict.current.replaceChildren(...FIELDS.flatMap((field) => [element('dt', FIELD_LABELS[field]), element('dd', String(current[field]))]));
    conflict.changes.replaceChildren(
      ...changing.map((field) =>
        element('li', `${FIELD_LABELS[field]}: ${quoted(current, field)} → ${quoted({ ...current, ...mine }, field)}${overwrites.includes(field) ? ' (replaces their change)' : ''}`),
      ),
    );
    say(conflict.plan, changing.length === 0 ? 'It already has your changes.' : overwrites.length > 0 ? 'Applying your changes would overwrite theirs:' : 'Applying your changes would set only these; their change stays:');
    conflict.reapply.hidden = changing.length === 0;
    conflict.reapply.textContent = overwrites.length > 0 ? 'Overwrite with my changes' : 'Apply my changes';
    conflict.reapply.className = overwrites.length > 0 ? 'danger' : '';
    conflict.discard.textContent = changing.length === 0 ? 'Close' : 'Discard my changes';
    conflict.panel.hidden = false;
    save.hidden = true;
    (changing.length === 0 ? conflict.discard : conflict.reapply).focus();
  }

  return {
    render(state, before) {
      const edit = state.edit;
      if (edit === before.edit) return;
      if (edit === undefined) {
        editing = undefined;
        if (dialog.open) dialog.close();
        return;
      }
      if (edit.session !== before.edit?.session) {
        editing = edit.base.id;
        fill(inputs, edit.base);
        hideConflict();
        if (!dialog.open) dialog.showModal();
        inputs.title.input.focus();
      }
      showProblems(inputs, edit.problems);
      say(error, edit.error);
      if (edit.conflict !== before.edit?.conflict) {
        if (edit.conflict !== undefined) showConflict(edit.base, edit.conflict);
        else hideConflict();
      }
      if (edit.problems !== before.edit?.problems) focusFirstProblem(inputs, edit.problems);
    },
  };
}
