// What the story library and the editor share: the school's API client (api.js: the school's key, or the
// session of whoever signed in), a failed call in a teacher's words, and the links between the two pages.

import { t, list } from "../i18n.js";
import { schoolApi, Refused } from "../api.js";
import { ERROR } from "../error-codes.js";
import { sessionFailureKey } from "../session.js";

export const api = await schoolApi();

/** What a failed call says to a teacher, from the catalog. */
export function failureText(failure) {
  if (!(failure instanceof Refused)) return t("library.error.network");
  const { code, params = {} } = failure.error;
  const session = sessionFailureKey(failure, api);
  if (session) return t(session);
  switch (code) {
    case ERROR.STORY_NOT_FOUND: return t("library.error.story_not_found");
    case ERROR.STORY_CONFLICT: return t("library.error.story_conflict", { version: params.version ?? "" });
    case ERROR.STORY_IN_USE: return t("library.error.story_in_use", { rooms: list((params.rooms ?? "").split(",").filter(Boolean)) });
    case ERROR.INVALID_STORY: return t("library.error.invalid_story", { count: failure.error.issues?.filter((i) => i.severity === "error").length ?? 0 });
    case ERROR.INVALID_JSON: return t("library.error.invalid_json");
    case ERROR.UNAUTHORIZED: case ERROR.WRONG_ROLE: return t("library.error.token");
    case ERROR.PAYLOAD_TOO_LARGE: return t("library.error.too_large");
    case ERROR.VOICE_NOT_INSTALLED: return t("library.error.voice");
    case ERROR.STORAGE_UNAVAILABLE: return t("library.error.storage");
    default: return t("library.error.other");
  }
}

/** A link to another page of the library (with `extra` in its fragment); the tab's session holds the key. */
export function pageLink(path, extra = {}) {
  const fragment = new URLSearchParams(extra).toString();
  return fragment ? `${path}#${fragment}` : path;
}
