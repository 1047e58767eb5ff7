/** The page's elements by id, checked once: a missing or mistyped element fails loudly at start. */
export function byId<T extends HTMLElement>(id: string, type: abstract new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`page element #${id} is missing`);
  return found;
}

/**
 * A new element whose text is set with textContent: catalogue text is always text, never HTML,
 * so a title like `<img onerror=…>` shows as those characters and runs nothing.
 */
export function element<K extends keyof HTMLElementTagNameMap>(tag: K, text = '', className = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.textContent = text;
  if (className !== '') node.className = className;
  return node;
}

/**
 * Shows a message (or clears it with ''): in role=alert or role=status elements, read out as it
 * changes. The same text again is left alone, so a render that changes nothing announces nothing.
 */
export function say(target: HTMLElement, message: string): void {
  if (target.textContent !== message) target.textContent = message;
}
