/* The bar above every page: the breadcrumb trail and the state of the live connection. */
/* global document */
import { h } from './dom.js';

const breadcrumb = document.getElementById('breadcrumb');
const connection = document.getElementById('connection');

/** Shows "Sessions / …items"; the last item is the current page, the others are links. */
export function setBreadcrumb(items) {
  breadcrumb.replaceChildren();
  const all = [{ label: 'Sessions', href: '#/' }, ...items];
  all.forEach((item, i) => {
    if (i > 0) breadcrumb.append(h('span', { class: 'crumb-sep', 'aria-hidden': 'true' }, '/'));
    const last = i === all.length - 1;
    breadcrumb.append(
      last ? h('span', { class: 'crumb', 'aria-current': 'page' }, item.label) : h('a', { class: 'crumb', href: item.href }, item.label),
    );
  });
}

/** `state` (idle, connecting, live, reconnecting) picks the style; `text` is announced politely. */
export function setConnection(state, text) {
  connection.className = 'connection connection-' + state;
  connection.textContent = text;
}
