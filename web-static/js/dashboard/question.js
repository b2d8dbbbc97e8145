// The projector's question and its answer: the options with their shapes, the countdown from the server's
// deadline (the last five seconds tick), then how the class answered, the right answer in words, and the
// explanation.

import { $, el, clear, announce } from "../dom.js";
import { OPTION_SHAPES, shapeName, renderOptions, namesColours, barColour } from "../options.js";
import { showQuestionPictures, showRevealPictures } from "../pictures.js";
import { t, number, seconds as secondsText, isolate } from "../i18n.js";
import { Countdown, ticks } from "../countdown.js";
import { room, services, show, record } from "./store.js";

let openTimer = null;
let countdown = null;

function timer() {
  countdown ??= new Countdown({
    fill: $("#countdown-fill"),
    text: $("#countdown-text"),
    clock: { now: () => services.connection.clock.now() },
    words: { left: (seconds) => secondsText(seconds), over: () => t("countdown.over"), none: () => t("countdown.none_short") },
    onSecond: (seconds) => { if (ticks(seconds)) services.sounds.play("tick"); },
  });
  return countdown;
}

export function stopTimers() {
  clearTimeout(openTimer);
  timer().stop();
}

export function question(view) {
  clearTimeout(openTimer);
  show("quiz");
  $("#question-number").textContent = t("quiz.number", { number: view.index + 1, count: view.count });
  $("#question-text").textContent = view.text;
  $("#distribution").hidden = true;
  $("#explanation").hidden = true;
  const options = $("#options");
  options.hidden = false;
  renderOptions(options, view.options, null);
  showQuestionPictures(view, { heading: $("#question-text"), options, room: services.pictures.room, phone: false });
  const open = () => { record(`question:${view.index}:shown`); runCountdown(); };
  const wait = services.connection.clock.until(view.opensAt);
  if (wait > 0) {
    timer().stop();
    timer().clear(() => t("quiz.get_ready"));
    openTimer = setTimeout(open, wait);
  } else {
    open();
  }
}

/** Counts down the open question, unless it is paused. */
export function runCountdown() {
  const { phase, paused, question: view } = room.state;
  if (!view || phase !== "question" || (paused && view.deadline)) return;
  timer().run(view);
}

/** A pause stops the count where it is; the question still opens when it was to. */
export function pauseCountdown() {
  timer().stop();
}

/** `quiet`: only the words again (the language changed): no chime, nothing recorded or announced. */
export function reveal(message, { quiet = false } = {}) {
  stopTimers();
  show("quiz");
  timer().clear(() => t("countdown.answer"));
  const view = room.state.question;
  const texts = view ? view.options : message.distribution.map((_, i) => t("option.number", { number: i + 1 }));
  const neutral = namesColours(texts);
  const total = message.distribution.reduce((a, b) => a + b, 0);
  const rows = clear($("#distribution"));
  rows.classList.toggle("many", message.distribution.length > 4);
  message.distribution.forEach((count, index) => {
    const correct = index === message.correctOption;
    const fill = el("div", { class: "fill" });
    fill.style.width = `${total ? (100 * count) / total : 0}%`;
    fill.style.setProperty("--bar-color", barColour(index, texts[index], neutral));
    rows.append(el("li", { class: correct ? "correct" : "", "data-index": index },
      el("span", { class: "shape", "aria-hidden": "true", text: OPTION_SHAPES[index % 8] }),
      el("span", { class: "text" },
        el("span", { class: "visually-hidden", text: `${shapeName(index)}: ` }),
        el("bdi", { dir: "auto", text: texts[index] ?? "" }),
        correct ? el("span", { class: "right", text: t("option.right") }) : null),
      el("div", { class: "track", "aria-hidden": "true" }, fill),
      el("span", { class: "count num" }, number(count), el("span", { class: "visually-hidden", text: ` ${t("reveal.children", { count })}` }))));
  });
  showRevealPictures(view, rows, { room: services.pictures.room });
  $("#options").hidden = true;
  rows.hidden = false;
  const explanation = $("#explanation");
  explanation.hidden = !message.explanation;
  explanation.textContent = message.explanation ?? "";
  if (quiet) return;
  services.sounds.play("chime");
  record(`reveal:${message.question}`);
  announce(t("reveal.announce_answer", { answer: isolate(texts[message.correctOption] ?? "") }));
}

/** Words the open question again (the language changed): its number, the shapes' names, the countdown. */
export function rewordQuestion() {
  const view = room.state.question;
  if (!view) return;
  $("#question-number").textContent = t("quiz.number", { number: view.index + 1, count: view.count });
  for (const option of document.querySelectorAll("#options .option")) {
    option.querySelector(".visually-hidden").textContent = `${shapeName(Number(option.dataset.index))}: `;
  }
  timer().reword();
}
