// The school's key (the admin token) for the library and class pages, kept for this tab only.
//
// A page opened with `#token=…` (or the sign-in page) keeps the key in the tab's sessionStorage
// (page-keys.js), so that the same tab can go back to the library or the class page without the printed
// link, and so that a teacher page opened from them (a link with rel="opener": the browser gives the new
// tab a copy of this tab's session) can lead back. sessionStorage dies with the tab, is never sent to a
// server, and is not shared with other tabs opened by hand: a shared PC keeps nothing once the tab is closed.

import { SCHOOL_SLOT, SIGNED_IN_SLOT, keptToken } from "./page-keys.js";

/** The key this tab holds, or "" when it holds none (a teacher page opened from a room's own link). */
export function schoolKey() {
  return keptToken(SCHOOL_SLOT);
}

/**
 * Whether this tab can open the library and the class pages: it holds the school's key, or it came from
 * them while signed in (the session's cookie goes with every page of this browser).
 */
export function schoolAccess() {
  return Boolean(keptToken(SCHOOL_SLOT) || keptToken(SIGNED_IN_SLOT));
}
