// One WebSocket to the room: says hello on every (re)connection, keeps the clock in sync with pings, and
// reconnects with backoff after a dropped Wi-Fi, a restart or a "try again later" (429, 503, 1012, 1013),
// but not after a refusal (bad code, kicked, replaced).

import { ServerClock } from "./clock.js";
import { CLOSE, shouldReconnect } from "./close-codes.js";

const CLOCK_SYNC = { burst: 5, burstStartMs: 150, burstGapMs: 250, intervalMs: 10000 };
const BACKOFF = { firstMs: 500, maxMs: 10000 };

export class RoomConnection {
  /**
   * @param hello a function returning the first message (join, rejoin, watch or control)
   * @param room a function returning the room code, sent in the URL (`/ws?room=…`) so a proxy can route it
   * @param onMessage called with every message except pongs
   * @param onStatus called with {state: "connecting"|"open"|"reconnecting"|"closed", code, reason, delayMs}
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
    this.retryDelay = this.backoff.firstMs;
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
      if (message.type === "welcome") {
        // A welcome means the server took us: the next drop starts backing off from the beginning.
        this.retryDelay = this.backoff.firstMs;
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
      // Exponential backoff with jitter, so a class of phones does not come back all in the same instant.
      const delayMs = Math.round(this.retryDelay * (0.5 + Math.random() * 0.5));
      this.attempts += 1;
      this.retryDelay = Math.min(this.retryDelay * 2, this.backoff.maxMs);
      this.onStatus({ state: "reconnecting", code: event.code, reason: event.reason, delayMs, attempts: this.attempts });
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
