// One WebSocket to the room: says hello on every (re)connection, keeps the clock in sync with pings, and
// reconnects after a dropped Wi-Fi, but not after a refusal (bad code, kicked, replaced).

import { ServerClock } from "./clock.js";

const NO_RECONNECT = new Set([1008, 4001, 4002, 1009, 1003]);

export class RoomConnection {
  /**
   * @param hello a function returning the first message (join, rejoin, watch or control)
   * @param onMessage called with every message except pongs
   * @param onStatus called with {state: "connecting"|"open"|"reconnecting"|"closed", code, reason}
   */
  constructor({ hello, onMessage, onStatus }) {
    this.hello = hello;
    this.onMessage = onMessage;
    this.onStatus = onStatus || (() => {});
    this.clock = new ServerClock();
    this.socket = null;
    this.pingID = 0;
    this.pings = new Map();
    this.retryDelay = 500;
    this.stopped = false;
    this.timers = [];
  }

  start() {
    this.stopped = false;
    this.open();
  }

  stop() {
    this.stopped = true;
    this.timers.forEach(clearTimeout);
    if (this.socket) this.socket.close(1000);
  }

  send(message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify(message));
      return true;
    }
    return false;
  }

  open() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    this.onStatus({ state: this.everOpened ? "reconnecting" : "connecting" });
    const socket = new WebSocket(`${scheme}://${location.host}/ws`);
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.everOpened = true;
      this.retryDelay = 500;
      socket.send(JSON.stringify(this.hello()));
      this.onStatus({ state: "open" });
      // A burst of pings for a good first estimate, then one every ten seconds.
      for (let i = 0; i < 5; i++) this.timers.push(setTimeout(() => this.ping(), 150 + i * 250));
      this.timers.push(setInterval(() => this.ping(), 10000));
    });
    socket.addEventListener("message", (event) => {
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
      // A first estimate until pings measure better (not a sample: its round trip is unknown).
      if (message.type === "welcome" && this.clock.samples.length === 0) this.clock.offset = message.serverTime - Date.now();
      this.onMessage(message);
    });
    socket.addEventListener("close", (event) => {
      this.timers.forEach((timer) => { clearTimeout(timer); clearInterval(timer); });
      this.timers = [];
      if (this.stopped || socket !== this.socket) return;
      if (NO_RECONNECT.has(event.code)) {
        this.onStatus({ state: "closed", code: event.code, reason: event.reason });
        return;
      }
      this.onStatus({ state: "reconnecting", code: event.code });
      this.timers.push(setTimeout(() => this.open(), this.retryDelay));
      this.retryDelay = Math.min(this.retryDelay * 2, 5000);
    });
  }

  /** Reconnects now (the "Try again" button). */
  retry() {
    this.timers.forEach(clearTimeout);
    this.stopped = false;
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) this.socket.close(1000);
    this.socket = null;
    this.open();
  }

  ping() {
    const id = ++this.pingID;
    const sentAt = Date.now();
    this.pings.set(id, sentAt);
    this.send({ type: "ping", id, clientTime: sentAt, rtt: this.clock.roundTrip ?? undefined });
  }
}

/** Reads `#room=…&token=…` from the address (dashboard and teacher links keep tokens out of logs). */
export function fragmentParameters() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}
