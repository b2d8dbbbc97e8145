// Keys in a page's address (web-static/js/page-keys.js): taken out of the address bar at once, kept in the
// tab's session per room, found again on a reload, with the rest of the address left as it was.

import { test } from "node:test";
import assert from "node:assert/strict";
import { takeToken, withoutToken, teacherSlot, dashboardSlot, keptToken, SCHOOL_SLOT } from "../../web-static/js/page-keys.js";

/** A tab: its address, its history (what replaceState did) and its sessionStorage. */
function tab(href, kept = {}) {
  const items = new Map(Object.entries(kept));
  const tab = {
    location: { get href() { return tab.href; } },
    href,
    replaced: [],
    history: {
      state: { page: 1 },
      replaceState(state, _title, url) { tab.replaced.push({ state, url }); tab.href = url; },
    },
    storage: { getItem: (key) => items.get(key) ?? null, setItem: (key, value) => items.set(key, String(value)) },
    items,
  };
  return tab;
}

const teacherOf = (params) => teacherSlot(params.get("room"));

test("the token leaves the address at once and the rest of the address stays", () => {
  const page = tab("https://laptop.local:8443/teacher?x=1#room=123456&token=secret&lang=de");
  const { params, token } = takeToken(teacherOf, page);
  assert.equal(token, "secret");
  assert.equal(params.get("room"), "123456");
  assert.equal(params.get("lang"), "de");
  assert.equal(params.get("token"), null);
  assert.equal(page.href, "https://laptop.local:8443/teacher?x=1#room=123456&lang=de");
  assert.ok(!page.href.includes("secret"));
  // Replaced in place, with the state it had: no history entry holds the key.
  assert.deepEqual(page.replaced, [{ state: { page: 1 }, url: page.href }]);
  assert.equal(page.items.get("storycircle.teacher.123456"), "secret");
});

test("a reload in the same tab finds the key the tab kept, for its own room only", () => {
  const page = tab("http://192.0.2.1:8080/teacher#room=123456", { [teacherSlot("123456")]: "kept", [teacherSlot("654321")]: "other" });
  assert.equal(takeToken(teacherOf, page).token, "kept");
  assert.deepEqual(page.replaced, []);
  const another = tab("http://192.0.2.1:8080/teacher#room=111111", { [teacherSlot("123456")]: "kept" });
  assert.equal(takeToken(teacherOf, another).token, "");
});

test("each room and each role keeps its own key", () => {
  const page = tab("http://h/dashboard#room=123456&token=board", { [teacherSlot("123456")]: "teacher" });
  assert.equal(takeToken((params) => dashboardSlot(params.get("room")), page).token, "board");
  assert.equal(keptToken(dashboardSlot("123456"), page.storage), "board");
  assert.equal(keptToken(teacherSlot("123456"), page.storage), "teacher");
});

test("a fragment holding only the token leaves no bare '#'", () => {
  const page = tab("http://h/stories#token=school");
  assert.equal(takeToken(() => SCHOOL_SLOT, page).token, "school");
  assert.equal(page.href, "http://h/stories");
  assert.equal(withoutToken("http://h/classes#id=cls_1&token=k"), "http://h/classes#id=cls_1");
  assert.equal(withoutToken("http://h/classes"), "http://h/classes");
});

test("storage that refuses does not stop the page, and the address is still cleaned", () => {
  const page = tab("http://h/teacher#room=1&token=t");
  page.storage = { getItem() { throw new Error("denied"); }, setItem() { throw new Error("denied"); } };
  assert.equal(takeToken(teacherOf, page).token, "t");
  assert.equal(page.href, "http://h/teacher#room=1");
});
