// The pages' one HTTP API client (web-static/js/api.js), over a fetch of the test's own: what it sends,
// what it answers, and how a refusal or a broken network reaches the page.

import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiClient, Refused } from "../../web-static/js/api.js";

/** A fetch that records its calls and answers `status` with `body` (JSON unless a string). */
function fakeFetch(status, body, headers = {}) {
  const calls = [];
  const fetch = async (path, init) => {
    calls.push({ path, init });
    return {
      ok: status >= 200 && status < 300,
      status,
      headers: { get: (name) => headers[name.toLowerCase()] ?? null },
      json: async () => (typeof body === "string" ? JSON.parse(body) : body),
      blob: async () => ({ text: typeof body === "string" ? body : JSON.stringify(body) }),
    };
  };
  return { fetch, calls };
}

test("a call sends the token, and a body as JSON", async () => {
  const { fetch, calls } = fakeFetch(200, { id: "s1" });
  const api = new ApiClient("key", { fetch });
  assert.deepEqual(await api.call("POST", "/api/stories", { story: { title: "Pip" } }), { id: "s1" });
  assert.equal(calls[0].path, "/api/stories");
  assert.equal(calls[0].init.method, "POST");
  assert.equal(calls[0].init.headers.Authorization, "Bearer key");
  assert.equal(calls[0].init.headers["Content-Type"], "application/json");
  assert.equal(calls[0].init.body, '{"story":{"title":"Pip"}}');
});

test("a string body (an imported file) goes as it is; no body, no content type", async () => {
  const { fetch, calls } = fakeFetch(200, {});
  const api = new ApiClient("key", { fetch });
  await api.call("POST", "/api/stories", '{"title":"as typed"}');
  assert.equal(calls[0].init.body, '{"title":"as typed"}');
  await api.call("GET", "/api/classes");
  assert.equal(calls[1].init.body, undefined);
  assert.equal(calls[1].init.headers["Content-Type"], undefined);
});

test("a refusal throws Refused with the server's status and error object", async () => {
  const error = { code: "story_conflict", params: { version: "3" }, current: { version: 3 } };
  const api = new ApiClient("key", fakeFetch(409, { error }));
  await assert.rejects(api.call("PUT", "/api/stories/s1", {}), (failure) => {
    assert.ok(failure instanceof Refused);
    assert.equal(failure.status, 409);
    assert.equal(failure.message, "story_conflict");
    assert.deepEqual(failure.error, error);
    return true;
  });
});

test("a refusal without a JSON body is still a Refused, said as an internal error", async () => {
  const api = new ApiClient("key", fakeFetch(502, "<html>Bad gateway</html>"));
  await assert.rejects(api.call("GET", "/api/classes"), (failure) => {
    assert.ok(failure instanceof Refused);
    assert.equal(failure.status, 502);
    assert.equal(failure.message, "http_502");
    assert.deepEqual(failure.error, { code: "internal_error" });
    return true;
  });
});

test("a network failure is not a refusal: the page words it as the network's", async () => {
  const api = new ApiClient("key", { fetch: async () => { throw new TypeError("Failed to fetch"); } });
  await assert.rejects(api.call("GET", "/api/classes"), (failure) => !(failure instanceof Refused) && failure instanceof TypeError);
});

test("a successful call with no JSON body answers null", async () => {
  const api = new ApiClient("key", fakeFetch(204, "not json"));
  assert.equal(await api.call("DELETE", "/api/stories/s1"), null);
});

test("a file comes with the server's name for it, else the fallback", async () => {
  const named = fakeFetch(200, "a,b\n", { "content-disposition": "attachment; filename=\"x.csv\"; filename*=UTF-8''Clase%201B.csv" });
  const file = await new ApiClient("t", named).file("/api/rooms/123456/results?format=csv", "storycircle-123456.csv");
  assert.equal(file.name, "Clase 1B.csv");
  assert.equal(file.blob.text, "a,b\n");
  assert.equal(named.calls[0].init.headers.Authorization, "Bearer t");
  const plain = await new ApiClient("t", fakeFetch(200, "a\n")).file("/x", "fallback.csv");
  assert.equal(plain.name, "fallback.csv");
});

test("a refused file throws Refused, so no error page is saved as a CSV", async () => {
  const api = new ApiClient("t", fakeFetch(401, { error: { code: "unauthorized" } }));
  await assert.rejects(api.file("/x", "f.csv"), (failure) => failure instanceof Refused && failure.error.code === "unauthorized");
});

test("the school's key comes from the page's fragment, leaves the address and is kept for the tab", async () => {
  const kept = new Map();
  globalThis.sessionStorage = { getItem: (key) => kept.get(key) ?? null, setItem: (key, value) => kept.set(key, value) };
  globalThis.location = { href: "http://192.0.2.1:8080/classes#id=cls_1&token=school-key" };
  globalThis.history = { state: null, replaceState: (_state, _title, url) => { globalThis.location.href = url; } };
  try {
    const { adminApi } = await import("../../web-static/js/api.js");
    const api = adminApi();
    assert.equal(api.token, "school-key");
    assert.equal(adminApi(), api, "read once");
    assert.deepEqual([...kept.values()], ["school-key"], "the tab keeps it for its other pages");
    assert.equal(globalThis.location.href, "http://192.0.2.1:8080/classes#id=cls_1", "the address holds no key");
  } finally {
    delete globalThis.sessionStorage;
    delete globalThis.location;
    delete globalThis.history;
  }
});
