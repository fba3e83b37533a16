/* Text-only DOM building: every string becomes a text node or an attribute value, never markup,
 * because ids, todo contents, task texts and error messages are all untrusted. */
/* global document, Node */

/** Creates an element; strings and numbers among the children become text nodes. */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = String(value);
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** A message that screen readers announce at once. */
export function errorBox(message) {
  return h('p', { class: 'error', role: 'alert' }, message);
}
