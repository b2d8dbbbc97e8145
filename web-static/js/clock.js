// The server is the clock. Each ping measures a round trip and the offset of the server's clock from
// ours (NTP-style: the server's time minus the midpoint of our send and receive times); the sample with
// the shortest round trip is the most trustworthy, so it wins.

export class ServerClock {
  constructor() {
    this.samples = [];
    this.offset = 0;
    this.roundTrip = null;
  }

  add(sentAt, receivedAt, serverTime) {
    const roundTrip = receivedAt - sentAt;
    this.samples.push({ roundTrip, offset: serverTime - (sentAt + receivedAt) / 2 });
    if (this.samples.length > 10) this.samples.shift();
    const best = this.samples.reduce((a, b) => (b.roundTrip < a.roundTrip ? b : a));
    this.offset = best.offset;
    this.roundTrip = Math.round(best.roundTrip);
  }

  /** The server's time now, in ms. */
  now() {
    return Date.now() + this.offset;
  }

  /** Milliseconds from now until server time `at` (negative if past). */
  until(at) {
    return at - this.now();
  }

  /** Runs `callback` at server time `at` (at once if it has passed); returns a cancel function. */
  at(at, callback) {
    const timer = setTimeout(callback, Math.max(0, this.until(at)));
    return () => clearTimeout(timer);
  }
}
