// Keys (tokens) that reach a page in its address: taken out of the address bar the moment the page loads
// and kept in the tab's session only.
//
// A link such as `/teacher#room=123456&token=…` carries its key in the fragment, which no server and no log
// sees. The page reads it, then rewrites its own address without it (history.replaceState: the rest of the
// URL stays, and no new history entry is made), so neither the address bar nor a shared PC's history keeps
// a key. The key goes to sessionStorage under a name of its own (a room's teacher key, a room's projector
// key, the school's key): a reload in the same tab finds it there; closing the tab forgets it. Nothing here
// touches the page at import, so node's test runner loads it as it is (Tests/Pages/page-keys.test.mjs).

/** Where a room's teacher token is kept (the teacher page and the results page read it). */
export const teacherSlot = (room) => `storycircle.teacher.${room}`;
/** Where a room's projector token is kept (the dashboard reads it). */
export const dashboardSlot = (room) => `storycircle.dashboard.${room}`;
/** Where the school's key (the admin token) is kept: the library and class pages (school-key.js). */
export const SCHOOL_SLOT = "storycircle.schoolKey";
/** Set ("1", not a secret) while this tab's library or class page works with a signed-in session. */
export const SIGNED_IN_SLOT = "storycircle.signedIn";

function sessionStore() {
  try { return globalThis.sessionStorage ?? null; } catch { return null; }
}

/** The fragment's parameters (`#room=…&token=…`). */
export function fragmentOf(href) {
  return new URLSearchParams(new URL(href).hash.replace(/^#/, ""));
}

/** `href` with `token` taken out of its fragment (and no `#` left when nothing else was there). */
export function withoutToken(href) {
  const url = new URL(href);
  const params = new URLSearchParams(url.hash.replace(/^#/, ""));
  params.delete("token");
  const rest = params.toString();
  url.hash = rest ? `#${rest}` : "";
  return url.href;
}

/** Keeps `token` in the tab's session under `slot` (nothing for an empty one or refused storage). */
export function keepToken(slot, token, storage = sessionStore()) {
  if (!slot || !token) return;
  try { storage?.setItem(slot, token); } catch { /* storage refused: this load still has the key */ }
}

/** The key kept under `slot` in the tab's session, or "". */
export function keptToken(slot, storage = sessionStore()) {
  if (!slot) return "";
  try { return storage?.getItem(slot) ?? ""; } catch { return ""; }
}

/**
 * The page's parameters and key. The key in the address (if any) is kept under `slotOf(params)` and taken
 * out of the address at once; without one, the key this tab kept. `params` never holds the token.
 */
export function takeToken(slotOf, { location = globalThis.location, history = globalThis.history, storage = sessionStore() } = {}) {
  const params = fragmentOf(location.href);
  const given = params.get("token");
  params.delete("token");
  const slot = slotOf(params);
  if (given !== null) {
    keepToken(slot, given, storage);
    try { history.replaceState(history.state, "", withoutToken(location.href)); } catch { /* no history: nothing kept it */ }
  }
  return { params, token: given || keptToken(slot, storage) };
}
