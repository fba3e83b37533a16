/* The dashboard's hash routes: `#/` lists the sessions, `#/sessions/<encoded id>` shows one. */

/** The link to a session's page (ids of subagents contain "/", hence the encoding). */
export const sessionHref = (id) => '#/sessions/' + encodeURIComponent(id);

/** The session id a location hash names, or null for the sessions list (and for a malformed id). */
export function sessionIdOf(hash) {
  const match = /^#\/sessions\/(.+)$/.exec(hash);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}
