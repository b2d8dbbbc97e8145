// Follows the narration as the server schedules it: sentence i starts at a server instant, the next ones
// follow the durations in the plan. Highlights the sentence and the word being spoken, scrolls along,
// and plays the audio when this screen is the one that speaks. A streamed plan grows: later sentences
// arrive while the first play (`append`); one that arrives after its turn waits for the server's
// `progress`, and until then the highlight holds at the end of the sentence before it.

import { el, clear, reducedMotion } from "./dom.js";

export class NarrationPlayer {
  constructor({ container, clock, onAudioBlocked, onSentence }) {
    this.container = container;
    this.clock = clock;
    this.onAudioBlocked = onAudioBlocked || (() => {});
    this.onSentence = onSentence || (() => {});
    this.plan = null;
    this.timers = [];
    this.audio = new Audio();
    this.audio.preload = "auto";
    this.current = -1;
  }

  /** Shows the story from a `narration.plan` message. */
  load(plan) {
    this.stop();
    this.plan = plan;
    this.next = null;
    clear(this.container);
    this.sentences = [];
    for (const sentence of plan.sentences) this.add(sentence);
    // Start fetching the first clips now, so they play on time.
    this.preload(0);
  }

  /** A sentence's text, each word its own span (for the highlight). */
  add(sentence) {
    const node = el("p", { class: "sentence", "data-index": sentence.index });
    const words = [];
    let cursor = 0;
    for (const word of sentence.words ?? []) {
      if (word.start < cursor) continue;
      if (word.start > cursor) node.append(document.createTextNode(sentence.text.slice(cursor, word.start)));
      const span = el("span", { class: "word", text: sentence.text.slice(word.start, word.start + word.length) });
      node.append(span);
      words.push({ at: word.at, node: span });
      cursor = word.start + word.length;
    }
    if (cursor < sentence.text.length) node.append(document.createTextNode(sentence.text.slice(cursor)));
    this.container.append(node);
    this.sentences.push({ node, words, durationMs: sentence.durationMs, audio: sentence.audio });
  }

  /**
   * One more sentence of a growing plan (`narration.sentence`). In time for its turn it is scheduled
   * where the plan puts it; late, it waits for the server's `progress`, which says when it starts.
   */
  append(sentence) {
    if (!this.plan || sentence.index !== this.sentences.length) return;
    this.add(sentence);
    const next = this.next;
    if (next && next.index === sentence.index && this.clock.now() < next.at) {
      this.timers.push(this.clock.at(next.at, () => this.begin(sentence.index, next.at)));
      this.next = { index: sentence.index + 1, at: next.at + sentence.durationMs + this.plan.gapMs };
    }
    if (this.current >= sentence.index - 2) this.preload(sentence.index);
  }

  preload(index) {
    for (const sentence of this.sentences.slice(index, index + 2)) {
      if (sentence.audio && !sentence.prefetched) {
        sentence.prefetched = true;
        fetch(sentence.audio).catch(() => {});
      }
    }
  }

  /** Sentence `index` starts at server time `at`; the rest follow the plan. */
  schedule(index, at) {
    if (!this.plan) return;
    this.stop();
    let start = at;
    for (let i = index; i < this.sentences.length; i++) {
      const begin = start;
      const sentenceIndex = i;
      this.timers.push(this.clock.at(begin, () => this.begin(sentenceIndex, begin)));
      start += this.sentences[i].durationMs + this.plan.gapMs;
    }
    // Where the sentence after the last one here would start, if it arrives in time.
    this.next = { index: this.sentences.length, at: start };
  }

  begin(index, startedAt) {
    const sentence = this.sentences[index];
    if (!sentence) return;
    this.sentences.forEach((s, i) => {
      s.node.classList.toggle("current", i === index);
      s.node.classList.toggle("done", i < index);
      if (i !== index) s.words.forEach((w) => w.node.classList.remove("spoken"));
    });
    this.current = index;
    this.onSentence(index);
    sentence.node.scrollIntoView({ block: "center", behavior: reducedMotion() ? "auto" : "smooth" });
    const offset = Math.max(0, this.clock.now() - startedAt);
    for (const word of sentence.words) {
      this.timers.push(setTimeout(() => {
        sentence.words.forEach((w) => w.node.classList.toggle("spoken", w === word));
      }, Math.max(0, word.at - offset)));
    }
    if (sentence.audio && offset < sentence.durationMs) {
      this.audio.src = sentence.audio;
      const play = () => {
        this.audio.currentTime = offset / 1000;
        this.audio.play().catch(() => this.onAudioBlocked());
      };
      if (this.audio.readyState >= 1) play();
      else this.audio.addEventListener("loadedmetadata", play, { once: true });
    }
    this.preload(index + 1);
  }

  /** Stops sound and highlighting (pause, or the story is over). */
  stop() {
    this.timers.forEach((cancel) => (typeof cancel === "function" ? cancel() : clearTimeout(cancel)));
    this.timers = [];
    this.next = null;
    this.audio.pause();
  }

  /** The whole story has been told. */
  finish() {
    this.stop();
    (this.sentences ?? []).forEach((s) => {
      s.node.classList.remove("current");
      s.node.classList.add("done");
      s.words.forEach((w) => w.node.classList.remove("spoken"));
    });
  }

  /** Tries the audio again after a tap (browsers only play sound after the page was touched). */
  unlock() {
    if (this.current >= 0) this.audio.play().catch(() => {});
  }
}
