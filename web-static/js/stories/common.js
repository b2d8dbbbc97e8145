// What the story library and the editor share: the school's API client (api.js), a failed call in a
// teacher's words, and the links between the two pages carrying the school's key.

import { t, list } from "../i18n.js";
import { adminApi, Refused } from "../api.js";

export const api = adminApi();

/** What a failed call says to a teacher, from the catalog. */
export function failureText(failure) {
  if (!(failure instanceof Refused)) return t("library.error.network");
  const { code, params = {} } = failure.error;
  switch (code) {
    case "story_not_found": return t("library.error.story_not_found");
    case "story_conflict": return t("library.error.story_conflict", { version: params.version ?? "" });
    case "story_in_use": return t("library.error.story_in_use", { rooms: list((params.rooms ?? "").split(",").filter(Boolean)) });
    case "invalid_story": return t("library.error.invalid_story", { count: failure.error.issues?.filter((i) => i.severity === "error").length ?? 0 });
    case "invalid_json": return t("library.error.invalid_json");
    case "unauthorized": case "wrong_role": return t("library.error.token");
    case "payload_too_large": return t("library.error.too_large");
    case "voice_not_installed": return t("library.error.voice");
    case "storage_unavailable": return t("library.error.storage");
    default: return t("library.error.other");
  }
}

/** A link to another page of the library, carrying the token (and `extra`) in its fragment. */
export function pageLink(path, extra = {}) {
  const fragment = new URLSearchParams({ ...extra, token: api.token });
  return `${path}#${fragment}`;
}
