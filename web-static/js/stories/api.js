// The story library's HTTP API (docs/protocol.md, "Story library") for the library page and the editor.
// The admin token comes in the page's fragment (#token=…), never in a URL a server or a log sees; the tab
// keeps it (school-key.js), so the tab's other pages and a teacher page it opened can come back here.

import { fragmentParameters } from "../connection.js";
import { t, list } from "../i18n.js";
import { ERROR } from "../error-codes.js";
import { rememberSchoolKey, schoolKey } from "../school-key.js";

export const token = fragmentParameters().get("token") ?? schoolKey();
rememberSchoolKey(token);

/** A refusal the server answered: its code, params and the rest of its error object. */
export class Refused extends Error {
  constructor(status, error) {
    super(error?.code ?? `http_${status}`);
    this.status = status;
    this.error = error ?? { code: ERROR.INTERNAL_ERROR };
  }
}

/** Calls the API; answers the JSON body, or throws `Refused` (the server said no) or a network error. */
export async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${token}` };
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new Refused(response.status, data?.error);
  return data;
}

/** What a failed call says to a teacher, from the catalog. */
export function failureText(failure) {
  if (!(failure instanceof Refused)) return t("library.error.network");
  const { code, params = {} } = failure.error;
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

/** A link to another page of the library, carrying the token (and `extra`) in its fragment. */
export function pageLink(path, extra = {}) {
  const fragment = new URLSearchParams({ ...extra, token });
  return `${path}#${fragment}`;
}
