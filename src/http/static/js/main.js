/* The agent-sessions live dashboard: plain JavaScript modules, no framework, no build step.
 *
 * Every piece of data (ids, todo contents, task texts, error messages) is untrusted text: the
 * DOM is built with createElement and textContent only, never with HTML strings (see dom.js).
 *
 * Pages (hash routes, see routes.js): `#/` lists the sessions; `#/sessions/<encoded id>` shows
 * one session live, over the Server-Sent Events stream `GET /sessions/{id}/events`.
 *
 * This module routes between the pages and the token form.
 */
/* global document, window, location */
import { onUnauthorized, tokenAccepted } from './api.js';
import { sessionIdOf } from './routes.js';
import { sessionPage } from './session-page.js';
import { sessionsPage } from './sessions-page.js';
import { showTokenForm } from './token-gate.js';

const main = document.getElementById('main');

let page = null; // the current page: { stop() }
let gated = false; // whether the token form is shown

/** Stops the current page and shows the token form, once however many requests got a 401. */
function askForToken() {
  if (gated) return;
  gated = true;
  if (page) page.stop();
  page = null;
  showTokenForm(main, false, () => {
    gated = false;
    route();
  });
}

function route() {
  if (gated) return;
  if (page) page.stop();
  page = null;
  const id = sessionIdOf(location.hash);
  page = id ? sessionPage(main, id) : sessionsPage(main);
  main.focus({ preventScroll: true });
}

onUnauthorized(askForToken);
window.addEventListener('hashchange', route);
void tokenAccepted().then((ok) => (ok ? route() : askForToken()));
