// One WebSocket to the room: says hello on every (re)connection, keeps the clock in sync with pings, and
// reconnects (a few quick tries, then backing off) after a dropped Wi-Fi, a restart or a "try again later" (429, 503, 1012, 1013),
// at the time the server says after `rate_limited` (`params.retryAfter`), but not after a refusal (bad code, kicked, replaced).

import { ServerClock } from "./clock.js";
import { CLOSE, shouldReconnect } from "./close-codes.js";
import { ERROR, retryAfterSeconds } from "./error-codes.js";

// A ping every 4 s: besides the clock, it is the traffic that keeps an idle socket open through a proxy
// whose read timeout is short so that it gives up on a paused node's upgrade quickly
// (config/nginx-cluster.conf: 6 s, which the server's own pings, every 20 s, would not meet).
const CLOCK_SYNC = { burst: 5, burstStartMs: 150, burstGapMs: 250, intervalMs: 4000 };
// After a drop, the first `quickTries` attempts come soon: `quickMs`, growing by `quickGrowth` each time, and
// jittered up to half as much again (200–300, 300–450, 450–675 ms): a room whose node died is taken over by
// another node within a fraction of a second, so waiting longer only keeps the child out. Then from
// `firstMs`, doubling up to `maxMs`, jittered down to half, so a server that stays away is not hammered.
// The jitter spreads a class's reconnections so they do not all arrive in one instant.
// Tests/Integration/test_cluster.py reads this line to reconnect its Python children on the same schedule.
const BACKOFF = { quickMs: 200, quickGrowth: 1.5, quickTries: 3, firstMs: 1000, maxMs: 10000 };

/** The wait before reconnection attempt `attempt` (1 for the first after a drop); `random` in [0, 1). */
export function reconnectDelay(attempt, backoff = BACKOFF, random = Math.random()) {
  const { quickMs = 0, quickGrowth = 1, quickTries = 0, firstMs, maxMs } = backoff;
  if (attempt <= quickTries) return Math.round(quickMs * quickGrowth ** (attempt - 1) * (1 + random * 0.5));
  const base = Math.min(firstMs * 2 ** (attempt - quickTries - 1), maxMs);
  return Math.round(base * (0.5 + random * 0.5));
}

export class RoomConnection {
  /**
   * @param hello a function returning the first message (join, rejoin, watch or control)
   * @param room a function returning the room code, sent in the URL (`/ws?room=…`) so a proxy can route it
   * @param onMessage called with every message except pongs
   * @param onStatus called with {state: "connecting"|"open"|"reconnecting"|"closed", code, reason, delayMs, retryAfter}
 *   (`retryAfter`: the seconds the server asked to wait, after `rate_limited`)
   * @param clockSync, backoff, WebSocketClass: for tests (a fake socket, fast pings)
   */
  constructor({ hello, room, onMessage, onStatus, clockSync = {}, backoff = {}, WebSocketClass = globalThis.WebSocket }) {
    this.hello = hello;
    this.room = room || (() => "");
    this.onMessage = onMessage;
    this.onStatus = onStatus || (() => {});
    this.clockSync = { ...CLOCK_SYNC, ...clockSync };
    this.backoff = { ...BACKOFF, ...backoff };
    this.WebSocketClass = WebSocketClass;
    this.clock = new ServerClock();
    this.socket = null;
    // The ping timers of the current socket only: a late close of an old socket must not touch them.
    this.socketTimers = null;
    this.reconnectTimer = null;
    this.pingID = 0;
    this.pings = new Map();
    this.attempts = 0;
    this.stopped = false;
    this.everOpened = false;
  }

  start() {
    this.stopped = false;
    this.open();
  }

  stop() {
    this.stopped = true;
    this.cancelReconnect();
    this.clearTimers(this.socketTimers);
    if (this.socket) this.socket.close(CLOSE.NORMAL);
  }

  send(message) {
    if (this.socket && this.socket.readyState === this.WebSocketClass.OPEN) {
      this.socket.send(JSON.stringify(message));
      return true;
    }
    return false;
  }

  get isOpen() {
    return Boolean(this.socket && this.socket.readyState === this.WebSocketClass.OPEN);
  }

  open() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    this.onStatus({ state: this.everOpened ? "reconnecting" : "connecting" });
    const code = this.room();
    const url = `${scheme}://${location.host}/ws${code ? `?room=${encodeURIComponent(code)}` : ""}`;
    const socket = new this.WebSocketClass(url);
    const timers = new Set();
    // Set when the server refuses this socket's hello with `rate_limited`: the wait it asked for.
    let toldToWaitMs = null;
    this.socket = socket;
    this.socketTimers = timers;
    socket.addEventListener("open", () => {
      if (socket !== this.socket) return;
      this.everOpened = true;
      socket.send(JSON.stringify(this.hello()));
      this.onStatus({ state: "open" });
      // A burst of pings for a good first estimate, then one every ten seconds.
      const { burst, burstStartMs, burstGapMs, intervalMs } = this.clockSync;
      for (let i = 0; i < burst; i++) timers.add(setTimeout(() => this.ping(socket), burstStartMs + i * burstGapMs));
      timers.add(setInterval(() => this.ping(socket), intervalMs));
    });
    socket.addEventListener("message", (event) => {
      if (socket !== this.socket) return;
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message.type === "pong") {
        const sentAt = this.pings.get(message.id);
        this.pings.delete(message.id);
        if (sentAt !== undefined) this.clock.add(sentAt, Date.now(), message.serverTime);
        return;
      }
      if (message.type === "error" && message.code === ERROR.RATE_LIMITED) toldToWaitMs = retryAfterSeconds(message) * 1000;
      if (message.type === "welcome") {
        // A welcome means the server took us: the next drop starts backing off from the beginning.
        this.attempts = 0;
        // A first estimate until pings measure better (not a sample: its round trip is unknown).
        if (this.clock.samples.length === 0) this.clock.offset = message.serverTime - Date.now();
      }
      this.onMessage(message);
    });
    socket.addEventListener("close", (event) => {
      // Only this socket's timers: by now another socket may be the current one, with its own.
      this.clearTimers(timers);
      if (this.stopped || socket !== this.socket) return;
      if (!shouldReconnect(event.code, event.reason)) {
        this.onStatus({ state: "closed", code: event.code, reason: event.reason });
        return;
      }
      // Quick tries first, then exponential backoff; jittered, so a class of phones does not come back all
      // in the same instant.
      this.attempts += 1;
      // Told when to come back: then, and not sooner; a class told together is spread over a second.
      const delayMs = toldToWaitMs !== null ? toldToWaitMs + Math.round(Math.random() * 1000) : reconnectDelay(this.attempts, this.backoff);
      const retryAfter = toldToWaitMs !== null ? toldToWaitMs / 1000 : undefined;
      this.onStatus({ state: "reconnecting", code: event.code, reason: event.reason, delayMs, retryAfter, attempts: this.attempts });
      this.cancelReconnect();
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null;
        if (!this.stopped && socket === this.socket) this.open();
      }, delayMs);
    });
  }

  /** Reconnects now (the "Try again" button). */
  retry() {
    this.cancelReconnect();
    this.clearTimers(this.socketTimers);
    this.stopped = false;
    const old = this.socket;
    this.socket = null;
    if (old && old.readyState <= this.WebSocketClass.OPEN) old.close(CLOSE.NORMAL);
    this.open();
  }

  ping(socket = this.socket) {
    if (socket !== this.socket) return;
    const id = ++this.pingID;
    const sentAt = Date.now();
    this.pings.set(id, sentAt);
    if (this.pings.size > 50) this.pings.delete(this.pings.keys().next().value);
    this.send({ type: "ping", id, clientTime: sentAt, rtt: this.clock.roundTrip ?? undefined });
  }

  cancelReconnect() {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
  }

  clearTimers(timers) {
    if (!timers) return;
    for (const timer of timers) {
      clearTimeout(timer);
      clearInterval(timer);
    }
    timers.clear();
  }
}

/** Reads `#room=…&token=…` from the address (dashboard and teacher links keep tokens out of logs). */
export function fragmentParameters() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}
