// The one client of the server's HTTP API (docs/protocol.md) for every page that calls it: the story
// library and editor, the class page, the administrators' screen, the results page and the teacher's CSV
// download. A call answers the JSON body, or throws `Refused` (the server said no: its status and error
// object) or the network's own error; each page words a failure for its reader. A client holds a bearer
// token (the school's key, a room's teacher token) or, without one, goes with this browser's session
// cookie and echoes the session's CSRF token on every call that changes something (session.js). Nothing
// here touches the page at import, so node's test runner loads it as it is (Tests/Pages/api.test.mjs).

import { ERROR } from "./error-codes.js";
import { fileName } from "./csv-file.js";
import { SCHOOL_SLOT, SIGNED_IN_SLOT, keepToken, takeToken } from "./page-keys.js";
import { currentSession } from "./session.js";

// Methods that change nothing: they carry no CSRF token.
const SAFE_METHODS = new Set(["GET", "HEAD"]);

/** A refusal the server answered: its code, params and the rest of its error object. */
export class Refused extends Error {
  constructor(status, error) {
    super(error?.code ?? `http_${status}`);
    this.status = status;
    this.error = error ?? { code: ERROR.INTERNAL_ERROR };
  }
}

/**
 * Calls made with one bearer token (the school's key, or a room's teacher token), or, with no token, with
 * the session of whoever signed in on this browser (`account`, and the `csrf` token its session echoes).
 */
export class ApiClient {
  /** `fetch` is the browser's unless a test hands in its own. */
  constructor(token, { fetch: fetcher = (...args) => globalThis.fetch(...args), account = null, csrf = "" } = {}) {
    this.token = token;
    this.fetch = fetcher;
    this.account = account;
    this.csrf = csrf;
  }

  /** Whether calls go with a key or a signed-in session (else the server will refuse them). */
  get signedIn() {
    return Boolean(this.token || this.account);
  }

  /** The headers that say who is asking. */
  credentials(method) {
    if (this.token) return { Authorization: `Bearer ${this.token}` };
    return this.csrf && !SAFE_METHODS.has(method) ? { "X-CSRF-Token": this.csrf } : {};
  }

  /** `body` is sent as JSON (a string as it is: an imported file). */
  async call(method, path, body) {
    const headers = this.credentials(method);
    const init = { method, headers, credentials: "same-origin" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = typeof body === "string" ? body : JSON.stringify(body);
    }
    const response = await this.fetch(path, init);
    const data = await response.json().catch(() => null);
    if (!response.ok) throw new Refused(response.status, data?.error);
    return data;
  }

  /** A file the server names (a CSV): `{ blob, name }`, the name from its header else `fallback`. */
  async file(path, fallback) {
    const response = await this.fetch(path, { method: "GET", headers: this.credentials("GET"), credentials: "same-origin" });
    if (!response.ok) throw new Refused(response.status, (await response.json().catch(() => null))?.error);
    return { blob: await response.blob(), name: fileName(response.headers.get("content-disposition"), fallback) };
  }
}

/** Hands a fetched file to the browser to save (a download from a blob has no header of its own). */
export function saveFile({ blob, name }) {
  const url = URL.createObjectURL(blob);
  const link = Object.assign(document.createElement("a"), { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

let admin = null;

/**
 * The client with the school's key (the admin token), for the library and class pages. The key comes in
 * the page's fragment (#token=…), never in a URL a server or a log sees, and leaves the address at once; the
 * tab keeps it (page-keys.js, school-key.js), so a reload, the tab's other pages and a teacher page it
 * opened find it there.
 */
export function adminApi() {
  if (!admin) admin = new ApiClient(takeToken(() => SCHOOL_SLOT).token);
  return admin;
}

let school = null;

/**
 * The client for the library, class and administrators' pages: the school's key when this tab holds one
 * (the laptop's printed or one-time link: adminApi), else the session of whoever signed in on this browser
 * (`GET /api/session`: its account and CSRF token). A tab with neither answers a client that is not
 * `signedIn`, and the page offers the sign-in. The key leaves the address before this first waits.
 */
export function schoolApi({ session = currentSession } = {}) {
  school ??= (async () => {
    const client = adminApi();
    if (client.token) return client;
    const found = await session().catch(() => null);
    if (found) {
      Object.assign(client, { account: found.account, csrf: found.csrf });
      // A teacher page this tab opens (its session copied) offers the way back (school-key.js).
      keepToken(SIGNED_IN_SLOT, "1");
    }
    return client;
  })();
  return school;
}
