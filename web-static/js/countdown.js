// The countdown of an open question, for every screen that shows one: from the server's deadline (never
// from when the question arrived), a bar that empties and the seconds left in words, redrawn each frame.
// The last five seconds tick, once a second.

export class Countdown {
  /**
   * @param fill the bar (scaled from 1 to 0), text: where the words go
   * @param clock the server clock (`now()`)
   * @param words `{ left(seconds), over(), none() }`: what the text says while counting, at zero, with no
   *   timer (functions, so the words are made in the page's language of the moment)
   * @param onSecond called once with each whole second left (for ticks and announcements)
   * @param onEnd called once when time is up
   */
  constructor({ fill, text, clock, words, onSecond = () => {}, onEnd = () => {} }) {
    Object.assign(this, { fill, text, clock, words, onSecond, onEnd });
    this.frame = null;
    this.shown = null;
  }

  /** Counts down to `deadline` of a question whose time limit is `timeLimitMs`; without a deadline, says so. */
  run({ deadline, timeLimitMs }) {
    this.stop();
    if (!deadline) {
      this.fill.style.transform = "scaleX(1)";
      this.shown = () => this.words.none();
      this.text.textContent = this.shown();
      return;
    }
    let lastSecond = null;
    const tick = () => {
      const remaining = Math.max(0, deadline - this.clock.now());
      const seconds = Math.ceil(remaining / 1000);
      this.fill.style.transform = `scaleX(${timeLimitMs ? remaining / timeLimitMs : 0})`;
      this.shown = remaining > 0 ? () => this.words.left(seconds) : () => this.words.over();
      this.text.textContent = this.shown();
      if (remaining > 0 && seconds !== lastSecond) {
        lastSecond = seconds;
        this.onSecond(seconds);
      }
      if (remaining > 0) this.frame = requestAnimationFrame(tick);
      else {
        this.frame = null;
        this.onEnd();
      }
    };
    tick();
  }

  /** Stops counting (a pause, a reveal), leaving what is shown. */
  stop() {
    if (this.frame !== null) cancelAnimationFrame(this.frame);
    this.frame = null;
  }

  /** Stops and shows `words()` over an empty bar (the answer is out). */
  clear(words = () => "") {
    this.stop();
    this.fill.style.transform = "scaleX(0)";
    this.shown = words;
    this.text.textContent = words();
  }

  /** Says what it shows again, in the page's language now. */
  reword() {
    if (this.shown) this.text.textContent = this.shown();
  }
}

/** Whether a second left should tick: the last five do. */
export function ticks(seconds) {
  return seconds <= 5;
}
