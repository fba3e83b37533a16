/* Tool calls that wait for a person (`agent.pendingApprovals` of the session), each with Approve
 * and Deny buttons (`POST …/approvals/{callId}/approve` or `/deny`, with an optional reason). */
import { api, sessionPath } from './api.js';
import { prettyArguments } from './conversation.js';
import { h } from './dom.js';

/**
 * The "Waiting for approval" card of session `id`: `element`, hidden while nothing waits;
 * `render(snapshot)` lists the waiting calls; `onDecided()` runs after a decision was accepted.
 */
export function createApprovals(id, onDecided) {
  const list = h('ul', { id: 'approvals-list', class: 'approvals-list' });
  const problem = h('p', { class: 'error-text', id: 'approvals-error', role: 'alert', hidden: true });
  const element = h('section', { class: 'card approvals-card', id: 'approvals', 'aria-labelledby': 'approvals-title', hidden: true },
    h('div', { class: 'card-head' }, h('h2', { id: 'approvals-title' }, 'Waiting for approval')),
    h('p', { class: 'muted approvals-intro' }, 'The agent asked for these tool calls; each runs only once a person approves it. A denied call is answered to the model with the reason.'),
    list,
    problem,
  );
  let shown = '';

  async function decide(callId, decision, reason, buttons) {
    for (const button of buttons) button.disabled = true;
    problem.hidden = true;
    try {
      const body = reason.trim() === '' ? {} : { reason: reason.trim() };
      await api(sessionPath(id, `/approvals/${encodeURIComponent(callId)}/${decision}`), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      onDecided();
    } catch (error) {
      if (error.status === 401) return;
      problem.hidden = false;
      problem.textContent = `Could not ${decision} call ${callId}: ${error.message}`;
      for (const button of buttons) button.disabled = false;
    }
  }

  function render(snapshot) {
    const pending = snapshot.agent && Array.isArray(snapshot.agent.pendingApprovals) ? snapshot.agent.pendingApprovals.filter((p) => p && typeof p === 'object') : [];
    element.hidden = pending.length === 0;
    // Redraw only when the waiting calls change, so a reason being typed is not wiped out.
    const key = JSON.stringify(pending.map((p) => p.callId));
    if (key === shown) return;
    shown = key;
    list.replaceChildren(
      ...pending.map((p) => {
        const callId = String(p.callId);
        const reason = h('input', { type: 'text', class: 'approval-reason', placeholder: 'Reason (optional)', 'aria-label': `Reason for call ${callId}`, maxlength: 2000 });
        const approve = h('button', { type: 'button', class: 'button button-primary approve' }, 'Approve');
        const deny = h('button', { type: 'button', class: 'button deny' }, 'Deny');
        approve.addEventListener('click', () => decide(callId, 'approve', reason.value, [approve, deny]));
        deny.addEventListener('click', () => decide(callId, 'deny', reason.value, [approve, deny]));
        return h('li', { class: 'approval', 'data-call-id': callId },
          h('div', { class: 'approval-head' }, h('code', { class: 'tool-name' }, String(p.name)), h('span', { class: 'call-id muted' }, callId)),
          h('pre', { class: 'tool-args' }, prettyArguments(p.arguments)),
          h('div', { class: 'approval-row' }, reason, approve, deny),
        );
      }),
    );
  }

  return { element, render };
}
