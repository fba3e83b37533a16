/* The form shown instead of a page when the server asks for a bearer token. */
import { forgetToken, storeToken, tokenAccepted } from './api.js';
import { h } from './dom.js';
import { setBreadcrumb, setConnection } from './top-bar.js';

/**
 * Replaces `main`'s content with the token form; `rejected` says the last token was refused.
 * A token is kept only once GET /auth accepts it, then `onAccepted` runs; a refused one is
 * forgotten and the form shown again with the reason.
 */
export function showTokenForm(main, rejected, onAccepted) {
  setBreadcrumb([]);
  setConnection('idle', '');
  const input = h('input', { id: 'token-input', name: 'token', type: 'password', autocomplete: 'current-password', required: true, spellcheck: 'false' });
  const problem = h('p', { id: 'token-error', class: 'error', role: 'alert' });
  if (rejected) problem.textContent = 'That token was not accepted. Check it and try again.';
  else problem.hidden = true;
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Continue');
  const form = h(
    'form',
    { id: 'token-form', class: 'card token-form', 'aria-labelledby': 'token-title' },
    h('h1', { id: 'token-title' }, 'Access token required'),
    h('p', { class: 'muted' }, 'This server asks for a bearer token. It is kept in this browser tab only (session storage).'),
    h('label', { for: 'token-input' }, 'Token'),
    h('div', { class: 'token-row' }, input, submit),
    problem,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    submit.disabled = true;
    storeToken(token);
    let ok = false;
    try {
      ok = await tokenAccepted();
    } catch {
      ok = false; // e.g. characters a header cannot carry
    }
    submit.disabled = false;
    if (!ok) {
      forgetToken();
      showTokenForm(main, true, onAccepted);
      return;
    }
    onAccepted();
  });
  main.replaceChildren(form);
  input.focus();
}
