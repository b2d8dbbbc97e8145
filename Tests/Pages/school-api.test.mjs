// Which credentials the library, class and administrators' pages use (web-static/js/api.js, schoolApi): the
// school's key when the tab holds one (the laptop's link), else the signed-in session, else none (the page
// offers the sign-in). Each case loads a fresh copy of api.js over a page address and a tab session of its own.

import { test } from "node:test";
import assert from "node:assert/strict";

let copies = 0;

/** A fresh api.js for a page at `href` whose tab keeps `kept`; answers the module and what the tab keeps. */
async function page(href, kept = {}) {
  const storage = new Map(Object.entries(kept));
  globalThis.sessionStorage = { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => storage.set(k, String(v)) };
  globalThis.location = new URL(href);
  globalThis.history = { state: null, replaceState: (_s, _t, url) => { globalThis.location = new URL(url, globalThis.location.href); } };
  copies += 1;
  return { api: await import(`../../web-static/js/api.js?copy=${copies}`), storage };
}

const ACCOUNT = { id: "acc_1", login: "ana", displayName: "Ana", role: "teacher", schoolID: "sch_1" };

test("a key in the address is used, leaves the address, and no session is asked for", async () => {
  const { api, storage } = await page("http://school.example/stories#token=KEY&lang=es");
  let asked = 0;
  const client = await api.schoolApi({ session: async () => { asked += 1; return { account: ACCOUNT, csrf: "c" }; } });
  assert.equal(client.token, "KEY");
  assert.equal(client.account, null);
  assert.equal(asked, 0);
  assert.equal(globalThis.location.href, "http://school.example/stories#lang=es");
  assert.equal(storage.get("storycircle.schoolKey"), "KEY");
});

test("without a key the signed-in session is used, and the tab remembers it is signed in", async () => {
  const { api, storage } = await page("http://school.example/classes#id=cls_1");
  const client = await api.schoolApi({ session: async () => ({ account: ACCOUNT, csrf: "c7" }) });
  assert.equal(client.token, "");
  assert.deepEqual(client.account, ACCOUNT);
  assert.equal(client.csrf, "c7");
  assert.equal(client.signedIn, true);
  assert.equal(storage.get("storycircle.signedIn"), "1");
  assert.equal(await api.schoolApi(), client, "one client for the page");
});

test("with neither, or when the session cannot be asked for, the client is not signed in", async () => {
  const nobody = await page("http://school.example/stories");
  assert.equal((await nobody.api.schoolApi({ session: async () => null })).signedIn, false);
  const offline = await page("http://school.example/admin");
  const client = await offline.api.schoolApi({ session: async () => { throw new TypeError("Failed to fetch"); } });
  assert.equal(client.signedIn, false);
  assert.equal(offline.storage.get("storycircle.signedIn"), undefined);
});
