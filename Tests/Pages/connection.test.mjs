// The room connection (web-static/js/connection.js) after the server's `rate_limited`: it says the same
// hello again by itself at the time it was told (`params.retryAfter`), not sooner, and tells the page so.
// A fake WebSocket and node's mock timers: nothing waits for real time.

import { test, mock } from "node:test";
import assert from "node:assert/strict";

globalThis.location = { protocol: "http:", host: "school.test:8080" };
const { RoomConnection } = await import("../../web-static/js/connection.js");
const { retryAfterSeconds, errorText } = await import("../../web-static/js/error-codes.js");

/** A WebSocket the test drives: `opened()`, `receive(message)`, `closed(code, reason)`. */
class FakeSocket {
  static OPEN = 1;
  static made = [];

  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.sent = [];
    this.listeners = {};
    FakeSocket.made.push(this);
  }

  addEventListener(type, listener) {
    (this.listeners[type] ??= []).push(listener);
  }

  send(text) {
    this.sent.push(JSON.parse(text));
  }

  close() {
    this.readyState = 3;
  }

  emit(type, event = {}) {
    for (const listener of this.listeners[type] ?? []) listener(event);
  }

  opened() {
    this.readyState = 1;
    this.emit("open");
  }

  receive(message) {
    this.emit("message", { data: JSON.stringify(message) });
  }

  closed(code, reason) {
    this.readyState = 3;
    this.emit("close", { code, reason });
  }
}

function connection(statuses) {
  FakeSocket.made = [];
  return new RoomConnection({
    hello: () => ({ type: "join", room: "482913", nickname: "Ana" }),
    room: () => "482913",
    onMessage: () => {},
    onStatus: (status) => statuses.push(status),
    clockSync: { burst: 0, intervalMs: 1e9 },
    WebSocketClass: FakeSocket,
  });
}

test("after rate_limited the same hello goes again at the time the server said, not sooner", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  const statuses = [];
  const room = connection(statuses);
  room.start();
  const first = FakeSocket.made[0];
  first.opened();
  assert.deepEqual(first.sent[0], { type: "join", room: "482913", nickname: "Ana" });
  first.receive({ type: "error", code: "rate_limited", message: "…", params: { retryAfter: "7" } });
  first.closed(1008, "rate_limited");

  const told = statuses.at(-1);
  assert.equal(told.state, "reconnecting");
  assert.equal(told.reason, "rate_limited");
  assert.equal(told.retryAfter, 7);
  assert.ok(told.delayMs >= 7000 && told.delayMs <= 8000, `${told.delayMs}`);

  t.mock.timers.tick(6999);
  assert.equal(FakeSocket.made.length, 1, "not before the time it was told");
  t.mock.timers.tick(1001);
  assert.equal(FakeSocket.made.length, 2);
  const second = FakeSocket.made[1];
  assert.equal(second.url, "ws://school.test:8080/ws?room=482913");
  second.opened();
  assert.deepEqual(second.sent[0], { type: "join", room: "482913", nickname: "Ana" });
  room.stop();
});

test("a refusal that is not about time still ends the connection", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  const statuses = [];
  const room = connection(statuses);
  room.start();
  const socket = FakeSocket.made[0];
  socket.opened();
  socket.receive({ type: "error", code: "room_not_found", message: "…", params: { code: "482913" } });
  socket.closed(1008, "room_not_found");
  assert.equal(statuses.at(-1).state, "closed");
  t.mock.timers.tick(120000);
  assert.equal(FakeSocket.made.length, 1);
});

test("a drop after a rate_limited socket backs off as usual", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  const statuses = [];
  const room = connection(statuses);
  room.start();
  FakeSocket.made[0].opened();
  FakeSocket.made[0].receive({ type: "error", code: "rate_limited", message: "…", params: { retryAfter: "3" } });
  FakeSocket.made[0].closed(1008, "rate_limited");
  t.mock.timers.tick(4000);
  const next = FakeSocket.made[1];
  next.opened();
  next.closed(1006, "");
  assert.equal(statuses.at(-1).retryAfter, undefined);
  assert.ok(statuses.at(-1).delayMs < 3000);
  room.stop();
});

test("the seconds to wait are read whole and bounded, a minute when the server does not say", () => {
  assert.equal(retryAfterSeconds({ code: "rate_limited", params: { retryAfter: "12" } }), 12);
  assert.equal(retryAfterSeconds({ code: "rate_limited", params: { retryAfter: "2.2" } }), 3);
  assert.equal(retryAfterSeconds({ code: "rate_limited" }), 60);
  assert.equal(retryAfterSeconds({ code: "rate_limited", params: { retryAfter: "-1" } }), 60);
  assert.equal(retryAfterSeconds({ code: "rate_limited", params: { retryAfter: "999999" } }), 3600);
  // Without a catalog loaded the words are the key itself: what matters here is that it is the timed one.
  assert.equal(typeof errorText({ code: "rate_limited", params: { retryAfter: "5" } }), "string");
});
