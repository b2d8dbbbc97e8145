// Sounds made in the browser with Web Audio: nothing is downloaded. A gentle lobby loop, a tick in the
// last five seconds, a chime at the reveal, a pop when a name arrives, a fanfare for the podium. One
// toggle button says in words whether sound is on; the choice is remembered on this device.
//
// Every sound played is recorded in `window.storycircle.sounds` (tests, and curious teachers).

import { t, onLanguageChange } from "./i18n.js";

const NOTES = { C5: 523.25, D5: 587.33, E5: 659.25, G5: 783.99, A5: 880.0, C6: 1046.5, E6: 1318.51, G6: 1567.98 };

export class SoundBoard {
  /**
   * @param key where the choice is remembered (localStorage)
   * @param defaultOn the projector plays by default; phones stay silent unless the child turns sound on
   * @param button the toggle (aria-pressed, and its text says the state)
   */
  constructor({ key, defaultOn, button }) {
    this.key = key;
    this.button = button;
    this.context = null;
    this.loopTimer = null;
    const saved = safeGet(key);
    this.on = saved === null ? defaultOn : saved === "on";
    window.storycircle = window.storycircle || { events: [] };
    window.storycircle.sounds = window.storycircle.sounds || [];
    if (button) {
      button.hidden = false;
      button.addEventListener("click", () => this.set(!this.on));
      onLanguageChange(() => this.render());
      this.render();
    }
    // Browsers start audio only after the page is touched: the first click or key wakes it up.
    const wake = () => { if (this.context && this.context.state === "suspended") this.context.resume().catch(() => {}); };
    document.addEventListener("pointerdown", wake, { passive: true });
    document.addEventListener("keydown", wake);
  }

  set(on) {
    this.on = on;
    safeSet(this.key, on ? "on" : "off");
    if (!on) this.stopLoop();
    else if (this.wantsLoop) this.startLoop();
    if (on) this.audio();
    this.render();
  }

  render() {
    if (!this.button) return;
    this.button.setAttribute("aria-pressed", String(this.on));
    this.button.textContent = this.on ? t("sound.on") : t("sound.off");
    this.button.title = this.on ? t("sound.turn_off") : t("sound.turn_on");
  }

  audio() {
    if (!this.context) {
      const Context = window.AudioContext || window.webkitAudioContext;
      if (!Context) return null;
      this.context = new Context();
    }
    if (this.context.state === "suspended") this.context.resume().catch(() => {});
    return this.context;
  }

  /** Plays `name` now if sound is on; returns whether it did. */
  play(name) {
    if (!this.on) return false;
    const context = this.audio();
    if (!context) return false;
    const now = context.currentTime + 0.02;
    switch (name) {
      case "pop": this.note(context, NOTES.A5, now, 0.09, "sine", 0.08, NOTES.E6); break;
      case "tick": this.note(context, 1000, now, 0.04, "square", 0.04); break;
      case "chime":
        [NOTES.C6, NOTES.E6, NOTES.G6].forEach((f, i) => this.note(context, f, now + i * 0.09, 0.7, "sine", 0.1));
        break;
      case "fanfare":
        [NOTES.C5, NOTES.E5, NOTES.G5, NOTES.C6].forEach((f, i) => this.note(context, f, now + i * 0.16, i === 3 ? 0.9 : 0.18, "triangle", 0.12));
        break;
      case "lobby":
        [NOTES.C5, NOTES.E5, NOTES.G5, NOTES.A5, NOTES.G5, NOTES.E5, NOTES.D5, NOTES.E5]
          .forEach((f, i) => this.note(context, f, now + i * 0.3, 0.26, "sine", 0.035));
        break;
      default: return false;
    }
    window.storycircle.sounds.push({ name, at: Date.now(), state: context.state });
    return true;
  }

  /** The lobby's loop: a soft eight-note tune every 2.4 seconds while the class gathers. */
  startLoop() {
    this.wantsLoop = true;
    if (!this.on || this.loopTimer) return;
    this.play("lobby");
    this.loopTimer = setInterval(() => this.play("lobby"), 2400);
  }

  stopLoop() {
    if (this.loopTimer) clearInterval(this.loopTimer);
    this.loopTimer = null;
  }

  /** Stops the loop for good (the lobby is over). */
  endLoop() {
    this.wantsLoop = false;
    this.stopLoop();
  }

  note(context, frequency, start, duration, type, volume, glideTo) {
    const oscillator = context.createOscillator();
    const gain = context.createGain();
    oscillator.type = type;
    oscillator.frequency.setValueAtTime(frequency, start);
    if (glideTo) oscillator.frequency.exponentialRampToValueAtTime(glideTo, start + duration);
    gain.gain.setValueAtTime(0.0001, start);
    gain.gain.exponentialRampToValueAtTime(volume, start + 0.015);
    gain.gain.exponentialRampToValueAtTime(0.0001, start + duration);
    oscillator.connect(gain).connect(context.destination);
    oscillator.start(start);
    oscillator.stop(start + duration + 0.05);
  }
}

function safeGet(key) {
  try { return localStorage.getItem(key); } catch { return null; }
}

function safeSet(key, value) {
  try { localStorage.setItem(key, value); } catch { /* private mode: the choice lasts for this page */ }
}
