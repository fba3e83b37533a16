/* The person's side of a session's agent loop: a box to send a message (`POST …/messages`), the
 * loop's activity with an Interrupt button while a turn runs (`POST …/interrupt`). */
import { api, sessionPath } from './api.js';
import { h } from './dom.js';
import { activityText } from './conversation.js';

/**
 * The message form of session `id`: `element`; `render(snapshot)` shows the agent's activity
 * and enables Interrupt while a turn runs; `onSent()` is called after each accepted change so
 * the page can refresh at once instead of waiting for the stream.
 */
export function createMessageBox(id, onSent) {
  const input = h('textarea', { id: 'message-input', name: 'text', rows: 2, placeholder: 'Ask the agent… (Ctrl+Enter sends)', 'aria-label': 'Message to the agent', maxlength: 32000 });
  const send = h('button', { type: 'submit', id: 'message-send', class: 'button button-primary' }, 'Send');
  const interrupt = h('button', { type: 'button', id: 'interrupt', class: 'button button-danger', hidden: true }, 'Interrupt');
  const activity = h('span', { id: 'agent-activity', class: 'agent-activity' }, 'idle');
  const status = h('p', { id: 'message-status', class: 'message-status', role: 'status', 'aria-live': 'polite' });
  let closed = false;

  const form = h('form', { id: 'message-form', class: 'message-form' },
    input,
    h('div', { class: 'message-row' },
      h('span', { class: 'agent-label' }, 'Agent: ', activity),
      interrupt,
      send,
    ),
    status,
  );

  function say(text, isError) {
    status.textContent = text;
    status.classList.toggle('error-text', Boolean(isError));
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = input.value;
    if (text.trim() === '') {
      say('Write a message first.', true);
      return;
    }
    send.disabled = true;
    try {
      const sent = await api(sessionPath(id, '/messages'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ text }) });
      input.value = '';
      say(
        sent.queued
          ? `Message ${sent.messageId} queued behind ${sent.ahead} other${sent.ahead === 1 ? '' : 's'}: its turn starts when the running one ends.`
          : `Message ${sent.messageId} sent: a turn starts.`,
        false,
      );
      onSent();
    } catch (error) {
      if (error.status !== 401) say(`Not sent: ${error.message}`, true);
    } finally {
      send.disabled = closed;
    }
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  interrupt.addEventListener('click', async () => {
    interrupt.disabled = true;
    try {
      await api(sessionPath(id, '/interrupt'), { method: 'POST' });
      say('Interrupted: the turn ended and its list stays.', false);
      onSent();
    } catch (error) {
      if (error.status !== 401) say(`Could not interrupt: ${error.message}`, true);
    } finally {
      interrupt.disabled = false;
    }
  });

  function render(snapshot) {
    const agent = snapshot.agent && typeof snapshot.agent === 'object' ? snapshot.agent : null;
    const state = agent && agent.activity ? agent.activity.state : 'idle';
    closed = Boolean(snapshot.closed);
    activity.textContent = closed ? 'the session is closed' : activityText(agent ? agent.activity : { state: 'idle' }) + (agent && agent.queued ? ` · ${agent.queued} message${agent.queued === 1 ? '' : 's'} queued` : '');
    activity.dataset.state = state;
    interrupt.hidden = closed || state === 'idle';
    input.disabled = closed;
    send.disabled = closed;
  }

  return { element: form, render };
}
