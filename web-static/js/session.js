// A teacher's or an administrator's own sign-in (docs/protocol.md, "Sessions"). The server keeps the session in
// an HttpOnly cookie, which no page can read: a page learns who is signed in, and the CSRF token it must echo
// in `X-CSRF-Token` on every request that changes something, from `GET /api/session`. The token stays in the
// page's memory only (never in storage), so a closed tab keeps nothing but the cookie the browser ends itself.
// Nothing here touches the page at import, so node's test runner loads it as it is
// (Tests/Pages/session.test.mjs).

import { Refused } from "./api.js";

/** The codes of the sessions' and accounts' refusals that the pages word (docs/protocol.md, "Error codes"). */
export const ACCOUNT_ERRORS = Object.freeze({
  SIGN_IN_FAILED: "sign_in_failed",
  RATE_LIMITED: "rate_limited",
  CSRF_FAILED: "csrf_failed",
  HTTPS_NEEDED: "https_needed",
  CONFLICT: "conflict",
  UNAUTHORIZED: "unauthorized",
  FORBIDDEN: "forbidden",
  WRONG_ROLE: "wrong_role",
  TRY_AGAIN: "try_again",
  STORAGE_UNAVAILABLE: "storage_unavailable",
});

/** The roles an account can have, lowest first, each with the catalog key that names it. */
export const ROLES = Object.freeze({
  teacher: "account.role.teacher",
  school_admin: "account.role.school_admin",
  district_admin: "account.role.district_admin",
});

/** The same roles as choices of a list on their own ("Teacher"), not inside a sentence ("a teacher"). */
export const ROLE_CHOICES = Object.freeze({
  teacher: "admin.accounts.role_option.teacher",
  school_admin: "admin.accounts.role_option.school_admin",
  district_admin: "admin.accounts.role_option.district_admin",
});

/** The catalog key naming `role` (an unknown role is named as a teacher: the least it can be). */
export function roleKey(role) {
  return ROLES[role] ?? ROLES.teacher;
}

/** The catalog key naming `role` as a choice in a list. */
export function roleChoiceKey(role) {
  return ROLE_CHOICES[role] ?? ROLE_CHOICES.teacher;
}

// The headings of the story library and of the class list, by who is looking: each says what the list holds
// (OwnershipRules.scope on the server). A teacher's own and the school's shared stories; a school
// administrator's school; a district administrator's list is the schools' (their teachers', not theirs to
// open); the school's key (the laptop's own server) reaches everything on the server.
const LIST_HEADINGS = Object.freeze({
  library: { teacher: "library.heading", school_admin: "library.heading_school", district_admin: "library.heading_district", key: "library.heading_everything" },
  classes: { teacher: "classes.heading", school_admin: "classes.heading_school", district_admin: "classes.heading_district", key: "classes.heading_everything" },
});

/** The catalog key of the `page`'s heading ("library" or "classes") for `client` (its key, or its account's role). */
export function listHeadingKey(page, client) {
  const headings = LIST_HEADINGS[page];
  if (client?.token) return headings.key;
  return headings[client?.account?.role] ?? headings.teacher;
}

/** Whether `account` may open the administrators' screen. */
export function administers(account) {
  return account?.role === "school_admin" || account?.role === "district_admin";
}

const browserFetch = (...args) => globalThis.fetch(...args);

/**
 * One JSON request of this origin's API with the session cookie (and `csrf` as X-CSRF-Token when given):
 * the answer's JSON, or a thrown `Refused` carrying how long to wait when the server said so.
 */
export async function send(method, path, { body, csrf, fetch = browserFetch } = {}) {
  const headers = {};
  const init = { method, headers, credentials: "same-origin", cache: "no-store", referrerPolicy: "no-referrer" };
  if (csrf) headers["X-CSRF-Token"] = csrf;
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const refused = new Refused(response.status, data?.error);
    refused.retryAfter = retryAfterSeconds(refused.error, response.headers);
    throw refused;
  }
  return data;
}

/** `{account, csrf}` of this browser's session, or null when it has none (401). A broken network throws. */
export async function currentSession({ fetch } = {}) {
  try {
    return sessionOf(await send("GET", "/api/session", { fetch }));
  } catch (failure) {
    if (failure instanceof Refused && failure.status === 401) return null;
    throw failure;
  }
}

/** Signs in with a login and a password: `{account, csrf}`, or throws `Refused` (with `retryAfter`). */
export async function signIn(login, password, { fetch } = {}) {
  return sessionOf(await send("POST", "/api/session", { body: { login, password }, fetch }));
}

/** Ends this browser's session. */
export async function signOut(csrf, { fetch } = {}) {
  await send("DELETE", "/api/session", { csrf, fetch });
}

/** Ends every session of the signed-in account, on every device (this one too). */
export async function signOutEverywhere(csrf, { fetch } = {}) {
  await send("POST", "/api/session/everywhere", { csrf, fetch });
}

function sessionOf(body) {
  if (!body?.account || typeof body.csrf !== "string") throw new Refused(500, { code: "internal_error" });
  return { account: body.account, csrf: body.csrf };
}

/**
 * How long a throttled sign-in must wait, in whole seconds: the error's `retryAfter` (or its params'),
 * else the `Retry-After` header, else a minute. Never less than one second.
 */
export function retryAfterSeconds(error, headers) {
  const candidates = [error?.retryAfter, error?.params?.retryAfter, error?.params?.seconds, headers?.get?.("retry-after")];
  for (const candidate of candidates) {
    const seconds = Number(candidate);
    if (candidate !== undefined && candidate !== null && candidate !== "" && Number.isFinite(seconds)) return Math.max(1, Math.ceil(seconds));
  }
  return 60;
}

/** What a failed sign-in says: a catalog key and its parameters. */
export function signInFailure(failure) {
  if (!(failure instanceof Refused)) return { key: "account.sign_in.network" };
  switch (failure.error.code) {
    case ACCOUNT_ERRORS.SIGN_IN_FAILED: case ACCOUNT_ERRORS.UNAUTHORIZED: return { key: "account.sign_in.failed" };
    case ACCOUNT_ERRORS.RATE_LIMITED: {
      const count = failure.retryAfter ?? retryAfterSeconds(failure.error);
      return count >= 120
        ? { key: "account.sign_in.rate_limited_minutes", params: { count: Math.ceil(count / 60) } }
        : { key: "account.sign_in.rate_limited", params: { count } };
    }
    case ACCOUNT_ERRORS.CSRF_FAILED: return { key: "account.error.csrf" };
    case ACCOUNT_ERRORS.HTTPS_NEEDED: return { key: "account.sign_in.https_needed" };
    case ACCOUNT_ERRORS.TRY_AGAIN: return { key: "account.sign_in.busy" };
    case ACCOUNT_ERRORS.STORAGE_UNAVAILABLE: return { key: "library.error.storage" };
    default: return { key: "account.sign_in.other" };
  }
}

// The pages a sign-in may go on to (`/sign-in#next=/classes`): only these, so a link cannot send a teacher
// who just signed in to another site or to an address of its choosing.
const NEXT_PAGES = ["/stories", "/stories/edit", "/classes", "/admin"];

/** Where to go after signing in: `next` when it is one of our pages, else the administrators' screen or the library. */
export function landingPage(account, next) {
  if (typeof next === "string") {
    const path = next.split("#")[0];
    if (NEXT_PAGES.includes(path) && (path !== "/admin" || administers(account))) return next;
  }
  return administers(account) ? "/admin" : "/stories";
}

/** The sign-in page's address that comes back to `page` afterwards. */
export function signInLink(page) {
  return `/sign-in#${new URLSearchParams({ next: page })}`;
}

/**
 * What a refused call says when it went with a session (not with a key): the session ended (signed out
 * everywhere, the account turned off, twelve hours passed), its CSRF token is stale, or the account may not
 * do this. A catalog key, or null when the page's own words fit.
 */
export function sessionFailureKey(failure, client) {
  if (!(failure instanceof Refused) || client?.token || !client?.account) return null;
  switch (failure.error.code) {
    case ACCOUNT_ERRORS.UNAUTHORIZED: return "account.error.signed_out";
    case ACCOUNT_ERRORS.CSRF_FAILED: return "account.error.csrf";
    // A district administrator manages schools and accounts; stories, classes and children's answers are
    // the teachers' of each school: said so, not "cannot do this".
    case ACCOUNT_ERRORS.FORBIDDEN: case ACCOUNT_ERRORS.WRONG_ROLE:
      return client.account.role === "district_admin" ? "account.error.district_admin" : "account.error.not_allowed";
    default: return null;
  }
}
