import { refusal } from '../http/messages.ts';

/** docs/contract.md, "Paths and ids": decimal digits naming a safe integer; `007` is 7. */
export function parseBookId(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) throw refusal('invalidBookId');
  }
  const id = Number(text);
  if (text.length === 0 || !Number.isSafeInteger(id)) throw refusal('invalidBookId');
  return id;
}
