/* Times as the dashboard shows them: relative ("3 min ago") or as a clock, in a <time> element. */
import { h } from './dom.js';

/** "just now", "12 s ago", "3 min ago", "5 h ago", else the date; "—" for no valid time. */
export function formatAgo(iso) {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return '—';
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hours = Math.round(m / 60);
  if (hours < 48) return `${hours} h ago`;
  return new Date(t).toLocaleDateString();
}

/** The local time of day. */
export const clockTime = (iso) => new Date(Date.parse(iso)).toLocaleTimeString();

/** The local date and time. */
export const dateTime = (iso) => new Date(Date.parse(iso)).toLocaleString();

/** A <time> element showing `format(iso)`, with the full local time as its tooltip. */
export function timeEl(iso, format) {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: new Date(t).toISOString(), title: new Date(t).toLocaleString() }, format(iso));
}
