// The pages' sign-in client (web-static/js/session.js) and the API client in session mode (api.js), over a
// fetch of the test's own: what is sent (the cookie goes by itself; the CSRF token on every call that changes
// something, never on a read, never beside a bearer token), how a refusal is worded, where a sign-in goes on to.

import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiClient, Refused } from "../../web-static/js/api.js";
import {
  administers, currentSession, landingPage, listHeadingKey, retryAfterSeconds, roleChoiceKey, roleKey, ROLES, sessionFailureKey, signIn, signInFailure, signInLink,
  signOut, signOutEverywhere,
} from "../../web-static/js/session.js";

function fakeFetch(status, body, headers = {}) {
  const calls = [];
  const fetch = async (path, init) => {
    calls.push({ path, init });
    return {
      ok: status >= 200 && status < 300,
      status,
      headers: { get: (name) => headers[name.toLowerCase()] ?? null },
      json: async () => body,
    };
  };
  return { fetch, calls };
}

const TEACHER = { id: "acc_1", login: "ana", displayName: "Ana", role: "teacher", schoolID: "sch_1" };

test("signing in posts the login and password with the cookie's credentials and answers the account and CSRF token", async () => {
  const { fetch, calls } = fakeFetch(200, { account: TEACHER, csrf: "c1" });
  assert.deepEqual(await signIn("ana", "pass word", { fetch }), { account: TEACHER, csrf: "c1" });
  assert.equal(calls[0].path, "/api/session");
  assert.equal(calls[0].init.method, "POST");
  assert.equal(calls[0].init.credentials, "same-origin");
  assert.deepEqual(JSON.parse(calls[0].init.body), { login: "ana", password: "pass word" });
  assert.equal(calls[0].init.headers["X-CSRF-Token"], undefined);
  assert.equal(calls[0].init.headers.Authorization, undefined);
});

test("a refused sign-in throws Refused with how long to wait, from the error or the Retry-After header", async () => {
  await assert.rejects(signIn("ana", "x", fakeFetch(401, { error: { code: "sign_in_failed" } })), (failure) => {
    assert.ok(failure instanceof Refused);
    assert.deepEqual(signInFailure(failure), { key: "account.sign_in.failed" });
    return true;
  });
  await assert.rejects(signIn("ana", "x", fakeFetch(429, { error: { code: "rate_limited", retryAfter: 12.2 } })), (failure) => {
    assert.equal(failure.retryAfter, 13);
    assert.deepEqual(signInFailure(failure), { key: "account.sign_in.rate_limited", params: { count: 13 } });
    return true;
  });
  await assert.rejects(signIn("ana", "x", fakeFetch(429, { error: { code: "rate_limited" } }, { "retry-after": "600" })), (failure) => {
    assert.deepEqual(signInFailure(failure), { key: "account.sign_in.rate_limited_minutes", params: { count: 10 } });
    return true;
  });
});

test("the wait is read from every place a server may put it, and is never under a second", () => {
  assert.equal(retryAfterSeconds({ retryAfter: 5 }), 5);
  assert.equal(retryAfterSeconds({ params: { retryAfter: "7" } }), 7);
  assert.equal(retryAfterSeconds({ params: { seconds: 9 } }), 9);
  assert.equal(retryAfterSeconds({}, { get: () => "3" }), 3);
  assert.equal(retryAfterSeconds({ retryAfter: 0 }), 1);
  assert.equal(retryAfterSeconds({ retryAfter: "soon" }), 60);
  assert.equal(retryAfterSeconds(null), 60);
});

test("a broken network and an unknown refusal have words of their own", () => {
  assert.deepEqual(signInFailure(new TypeError("Failed to fetch")), { key: "account.sign_in.network" });
  assert.deepEqual(signInFailure(new Refused(500, { code: "internal_error" })), { key: "account.sign_in.other" });
  assert.deepEqual(signInFailure(new Refused(403, { code: "csrf_failed" })), { key: "account.error.csrf" });
});

test("the current session is null when the server says 401, and a body without a CSRF token is not a session", async () => {
  assert.equal(await currentSession(fakeFetch(401, { error: { code: "unauthorized" } })), null);
  const { fetch, calls } = fakeFetch(200, { account: TEACHER, csrf: "c2" });
  assert.deepEqual(await currentSession({ fetch }), { account: TEACHER, csrf: "c2" });
  assert.equal(calls[0].init.method, "GET");
  assert.equal(calls[0].init.headers["X-CSRF-Token"], undefined);
  await assert.rejects(currentSession(fakeFetch(200, { account: TEACHER })), Refused);
  await assert.rejects(currentSession(fakeFetch(503, { error: { code: "storage_unavailable" } })), Refused);
});

test("signing out, here and everywhere, echoes the CSRF token", async () => {
  const here = fakeFetch(204, null);
  await signOut("c3", { fetch: here.fetch });
  assert.equal(here.calls[0].init.method, "DELETE");
  assert.equal(here.calls[0].path, "/api/session");
  assert.equal(here.calls[0].init.headers["X-CSRF-Token"], "c3");
  const everywhere = fakeFetch(204, null);
  await signOutEverywhere("c4", { fetch: everywhere.fetch });
  assert.equal(everywhere.calls[0].init.method, "POST");
  assert.equal(everywhere.calls[0].path, "/api/session/everywhere");
  assert.equal(everywhere.calls[0].init.headers["X-CSRF-Token"], "c4");
});

test("a client in session mode sends no bearer token, and the CSRF token only on calls that change something", async () => {
  const { fetch, calls } = fakeFetch(200, {});
  const api = new ApiClient("", { fetch, account: TEACHER, csrf: "c5" });
  assert.equal(api.signedIn, true);
  await api.call("GET", "/api/stories");
  await api.call("POST", "/api/stories", { story: {} });
  await api.call("DELETE", "/api/stories/s1");
  await api.file("/api/classes/c1/results.csv", "x.csv").catch(() => {});
  assert.equal(calls[0].init.headers.Authorization, undefined);
  assert.equal(calls[0].init.headers["X-CSRF-Token"], undefined);
  assert.equal(calls[0].init.credentials, "same-origin");
  assert.equal(calls[1].init.headers["X-CSRF-Token"], "c5");
  assert.equal(calls[2].init.headers["X-CSRF-Token"], "c5");
  assert.equal(calls[3].init.headers["X-CSRF-Token"], undefined);
});

test("a client with a key sends the key and never a CSRF token; a client with neither is not signed in", async () => {
  const { fetch, calls } = fakeFetch(200, {});
  const keyed = new ApiClient("key", { fetch, csrf: "c6" });
  await keyed.call("POST", "/api/rooms", {});
  assert.equal(calls[0].init.headers.Authorization, "Bearer key");
  assert.equal(calls[0].init.headers["X-CSRF-Token"], undefined);
  assert.equal(new ApiClient("").signedIn, false);
});

test("a refusal of a call made with a session is said as the session's problem; with a key, as the page's own", () => {
  const session = new ApiClient("", { account: TEACHER, csrf: "c" });
  const keyed = new ApiClient("key");
  const unauthorized = new Refused(401, { code: "unauthorized" });
  assert.equal(sessionFailureKey(unauthorized, session), "account.error.signed_out");
  assert.equal(sessionFailureKey(new Refused(403, { code: "csrf_failed" }), session), "account.error.csrf");
  assert.equal(sessionFailureKey(new Refused(403, { code: "forbidden" }), session), "account.error.not_allowed");
  assert.equal(sessionFailureKey(new Refused(404, { code: "story_not_found" }), session), null);
  assert.equal(sessionFailureKey(unauthorized, keyed), null);
  assert.equal(sessionFailureKey(new TypeError("offline"), session), null);
});

test("a district administrator refused a teacher's page is told whose it is, not that the account cannot", () => {
  const district = new ApiClient("", { account: { ...TEACHER, role: "district_admin", schoolID: null }, csrf: "c" });
  assert.equal(sessionFailureKey(new Refused(403, { code: "forbidden" }), district), "account.error.district_admin");
  assert.equal(sessionFailureKey(new Refused(403, { code: "wrong_role" }), district), "account.error.district_admin");
  assert.equal(sessionFailureKey(new Refused(401, { code: "unauthorized" }), district), "account.error.signed_out");
});

test("roles as choices of a list have keys of their own, for every role", () => {
  for (const role of Object.keys(ROLES)) assert.equal(roleChoiceKey(role), `admin.accounts.role_option.${role}`);
  assert.equal(roleChoiceKey("janitor"), "admin.accounts.role_option.teacher");
});

test("after signing in: one of our pages when asked, else the administrators' screen or the library", () => {
  const admin = { ...TEACHER, role: "school_admin" };
  assert.equal(landingPage(TEACHER, null), "/stories");
  assert.equal(landingPage(admin, null), "/admin");
  assert.equal(landingPage({ ...TEACHER, role: "district_admin" }, undefined), "/admin");
  assert.equal(landingPage(TEACHER, "/classes#id=cls_1"), "/classes#id=cls_1");
  assert.equal(landingPage(TEACHER, "/admin"), "/stories", "a teacher is not sent to a screen that refuses them");
  assert.equal(landingPage(admin, "/admin"), "/admin");
  for (const elsewhere of ["https://evil.example/", "//evil.example/stories", "/stories/../x", "javascript:alert(1)", "/teacher#room=1"]) {
    assert.equal(landingPage(TEACHER, elsewhere), "/stories", elsewhere);
  }
  assert.equal(signInLink("/classes#id=cls_1"), "/sign-in#next=%2Fclasses%23id%3Dcls_1");
});

test("roles are named by catalog keys, an unknown one as the least", () => {
  assert.equal(roleKey("teacher"), "account.role.teacher");
  assert.equal(roleKey("school_admin"), "account.role.school_admin");
  assert.equal(roleKey("district_admin"), "account.role.district_admin");
  assert.equal(roleKey("superuser"), "account.role.teacher");
  assert.equal(administers(TEACHER), false);
  assert.equal(administers({ role: "school_admin" }), true);
  assert.equal(administers(null), false);
});

test("a server busy hashing passwords, or unable to store the session, asks for another try in words", () => {
  assert.deepEqual(signInFailure(new Refused(503, { code: "try_again" })), { key: "account.sign_in.busy" });
  assert.deepEqual(signInFailure(new Refused(403, { code: "https_needed" })), { key: "account.sign_in.https_needed" });
  assert.deepEqual(signInFailure(new Refused(503, { code: "storage_unavailable" })), { key: "library.error.storage" });
});

test("the library and the class list are headed by what they hold for who is looking, in every catalog", async () => {
  const { readFile } = await import("node:fs/promises");
  const as = (role) => new ApiClient("", { account: { id: "acc_1", role, schoolID: role === "district_admin" ? null : "sch_1" }, csrf: "c" });
  const headings = (page) => [as("teacher"), as("school_admin"), as("district_admin"), new ApiClient("key"), new ApiClient("")].map((client) => listHeadingKey(page, client));
  assert.deepEqual(headings("library"), ["library.heading", "library.heading_school", "library.heading_district", "library.heading_everything", "library.heading"]);
  assert.deepEqual(headings("classes"), ["classes.heading", "classes.heading_school", "classes.heading_district", "classes.heading_everything", "classes.heading"]);
  assert.equal(listHeadingKey("library", as("a_role_of_tomorrow")), "library.heading", "an unknown role is headed as the least");
  // The district administrator's heading is not "Your stories": the stories are the schools'.
  for (const language of ["en", "fr", "es", "de", "pt", "ar"]) {
    const catalog = JSON.parse(await readFile(new URL(`../../web-static/i18n/${language}.json`, import.meta.url), "utf8"));
    const words = [...headings("library"), ...headings("classes")].map((key) => catalog[key]);
    assert.ok(words.every((text) => typeof text === "string" && text.length > 0), language);
    assert.equal(new Set(words).size, 8, `${language}: each heading its own words`);
  }
});
