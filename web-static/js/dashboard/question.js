// The projector's question and its answer: the options with their shapes, the countdown from the server's
// deadline (the last five seconds tick), then how the class answered, the right answer in words, and the
// explanation.

import { $, announce } from "../dom.js";
import { shapeName, renderOptions } from "../options.js";
import { showQuestionPictures, showRevealPictures } from "../pictures.js";
import { t, seconds as secondsText, isolate } from "../i18n.js";
import { renderAnswerChart } from "../answer-chart.js";
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
  fitOptions(options);
  for (const picture of options.querySelectorAll("img")) picture.addEventListener("load", () => fitOptions(options), { once: true });
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

/**
 * Every answer as big as the projector's type (48px at 1080p), except one too long for its box: that option
 * alone steps down until it fits, never below `SMALLEST` of the type, so a short answer stays big beside it.
 */
const SMALLEST = 0.5;
function fitOptions(options) {
  if (options.hidden) return;
  for (const option of options.querySelectorAll(".option")) {
    option.style.fontSize = "";
    const full = parseFloat(getComputedStyle(option).fontSize);
    let size = full;
    while (spills(option) && size > full * SMALLEST) {
      size = Math.max(full * SMALLEST, size * 0.9);
      option.style.fontSize = `${size}px`;
    }
  }
}

/** Whether the option's contents need more room than its box has. */
function spills(option) {
  return option.scrollHeight > option.clientHeight + 1 || option.scrollWidth > option.clientWidth + 1;
}

addEventListener("resize", () => fitOptions($("#options")));

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
  const rows = renderAnswerChart($("#distribution"), { distribution: message.distribution, correctOption: message.correctOption, texts });
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
