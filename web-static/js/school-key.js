// The school's key (the admin token) for the library and class pages, kept for this tab only.
//
// A page opened with `#token=…` remembers the key in the tab's sessionStorage, so that the same tab can go
// back to the library or the class page without the printed link, and so that a teacher page opened from
// them (a link with rel="opener": the browser gives the new tab a copy of this tab's session) can lead back.
// sessionStorage dies with the tab, is never sent to a server, and is not shared with other tabs opened
// by hand: a shared PC keeps nothing once the tab is closed.

const KEY = "storycircle.schoolKey";

/** The key this tab holds, or "" when it holds none (a teacher page opened from the printed link). */
export function schoolKey() {
  try { return sessionStorage.getItem(KEY) ?? ""; } catch { return ""; }
}

/** Keeps `key` for this tab; an empty key keeps nothing. */
export function rememberSchoolKey(key) {
  if (!key) return;
  try { sessionStorage.setItem(KEY, key); } catch { /* storage refused: the printed link still works */ }
}
