// A question: the options (shapes, and colours that never contradict a label), a countdown from the
// server's deadline that stays in view while scrolling, and the answer. A tap is kept until the server
// acknowledges it: "Sending…" then "Saved ✓". A tap made while the connection is down is sent when it comes
// back, if the question is still open.

import { $, clear, announce, progressDots } from "../dom.js";
import { renderOptions } from "../options.js";
import { showQuestionPictures } from "../pictures.js";
import { Countdown, ticks } from "../countdown.js";
import { ERROR, TAP_AGAIN, errorText } from "../error-codes.js";
import { t, isolate } from "../i18n.js";
import { shapeName } from "../options.js";
import { room, session, services, show, record, saveSession, answering, results } from "./store.js";

let openTimer = null;
let countdown = null;

function timer() {
  countdown ??= new Countdown({
    fill: $("#countdown-fill"),
    text: $("#countdown-text"),
    clock: { now: () => services.connection.clock.now() },
    words: { left: (seconds) => t("countdown.left", { count: seconds }), over: () => t("countdown.over"), none: () => t("countdown.none") },
    onSecond: (seconds) => {
      if (seconds === 10 || seconds === 5) announce(t("countdown.left", { count: seconds }));
      if (ticks(seconds)) services.sounds.play("tick");
    },
    onEnd: () => {
      announce(t("countdown.over"));
      if (session.chosen === null) lockOptions();
    },
  });
  return countdown;
}

export function stopTimers() {
  timer().stop();
  clearTimeout(openTimer);
}

/** The countdown gives way to the answer. */
export function clearCountdown() {
  stopTimers();
  timer().clear();
}

export function renderDots() {
  clear($("#quiz-dots")).append(progressDots(results(), room.state.questionCount));
}

/** The line under the options, as words made now (a change of language words it again). */
let statusWords = () => "";
function setStatus(words, kind = "") {
  statusWords = words;
  const status = $("#answer-status");
  status.textContent = words();
  status.className = `answer-status ${kind}`;
}

/** Shows question `view`; `saved` is the option the server already has from this child (a snapshot says so). */
export function showQuestion(view, saved) {
  stopTimers();
  session.chosen = null;
  show("quiz");
  $("#reveal").hidden = true;
  $("#reveal-result").hidden = true;
  $("#question-number").textContent = t("quiz.number", { number: view.index + 1, count: view.count });
  $("#question-text").textContent = view.text;
  setStatus(() => "");
  renderDots();
  const options = $("#options");
  renderOptions(options, view.options, choose);
  showQuestionPictures(view, { heading: $("#question-text"), options, room: room.state.code ?? session.room, phone: true });
  if (session.pending && session.pending.question !== view.index) {
    // An answer to a question that has closed since: it can no longer count.
    session.pending = null;
    saveSession();
  }
  if (saved !== null && saved !== undefined) {
    session.pending = null;
    saveSession();
    markChosen(saved);
    setStatus(() => t("answer.saved"), "saved");
  } else if (session.pending) {
    markChosen(session.pending.option);
    setStatus(() => t("answer.sending"), "sending");
  }

  const waitMs = services.connection.clock.until(view.opensAt);
  const open = () => {
    $("#get-ready").hidden = true;
    options.hidden = false;
    record(`question:${view.index}:shown`);
    $("#quiz").scrollIntoView({ block: "start" });
    announce(t("quiz.announce", { number: view.index + 1, text: isolate(view.text) }));
    sendPending();
    runCountdown();
  };
  if (waitMs > 0) {
    $("#get-ready").hidden = false;
    options.hidden = true;
    openTimer = setTimeout(open, waitMs);
  } else {
    open();
  }
}

/** Counts down the open question from its deadline, unless it is paused or revealed. */
export function runCountdown() {
  const view = room.state.question;
  if (!view || room.state.phase !== "question" || (room.state.paused && view.deadline)) return;
  timer().run(view);
}

function choose(index) {
  if (session.chosen !== null || !answering()) return;
  session.pending = { question: room.state.question.index, option: index };
  saveSession();
  markChosen(index);
  sendPending();
}

/** Sends the answer waiting for an acknowledgement, if the connection is up; otherwise it waits for it. */
export function sendPending() {
  const pending = session.pending;
  const question = room.state.question;
  if (!pending || !question || pending.question !== question.index || room.state.phase !== "question") return;
  const sent = services.connection.send({ type: "answer", question: pending.question, option: pending.option });
  setStatus(() => (sent ? t("answer.sending") : t("answer.sending_offline")), "sending");
  if (!sent && !$("#connection-message").hidden) services.banner("connection.lost_answer_kept");
  record(sent ? `answer:${pending.question}:sent` : `answer:${pending.question}:waiting`);
}

export function acknowledged(ack) {
  if (session.pending && session.pending.question === ack.question) {
    session.pending = null;
    saveSession();
  }
  const question = room.state.question;
  if (question && ack.question === question.index && room.state.phase === "question") {
    markChosen(ack.option);
    setStatus(() => t("answer.saved"), "saved");
    record(`answer:${ack.question}:saved`);
    announce(t("answer.saved_announce"));
  }
}

/** A refusal of an answer: say so, and let the child tap again where that can still help. */
export function answerRefused(error) {
  session.pending = null;
  saveSession();
  if (error.code === ERROR.ALREADY_ANSWERED) {
    // Only one option can be tapped here, so the answer the server has is this one.
    setStatus(() => t("answer.saved"), "saved");
    return;
  }
  setStatus(() => errorText(error));
  announce(errorText(error));
  if (TAP_AGAIN.has(error.code)) unlockChoice();
}

export function markChosen(index) {
  session.chosen = index;
  lockOptions();
  const button = $(`#options .option[data-index="${index}"]`);
  if (button) {
    button.classList.add("chosen");
    button.setAttribute("aria-pressed", "true");
    button.querySelector(".tag").textContent = t("option.your_answer");
  }
}

function lockOptions() {
  $("#options").classList.add("locked");
  for (const button of document.querySelectorAll("#options .option")) button.disabled = true;
}

function unlockChoice() {
  if (room.state.phase !== "question") return;
  session.chosen = null;
  $("#options").classList.remove("locked");
  for (const button of document.querySelectorAll("#options .option")) {
    button.disabled = false;
    button.classList.remove("chosen");
    button.removeAttribute("aria-pressed");
    button.querySelector(".tag").textContent = "";
  }
}

export function pauseQuestion() {
  timer().stop();
}

/** The store has the question's new deadline (and opening) by now. */
export function resumeQuestion() {
  if (room.state.phase === "question" && room.state.question?.deadline) runCountdown();
}

/** Words the open question again (the language changed): its number, the shapes' names, the line under it. */
export function rewordQuestion() {
  const view = room.state.question;
  if (!view) return;
  $("#question-number").textContent = t("quiz.number", { number: view.index + 1, count: view.count });
  for (const button of document.querySelectorAll("#options .option")) {
    button.querySelector(".visually-hidden").textContent = `${shapeName(Number(button.dataset.index))}: `;
    if (button.classList.contains("chosen") && room.state.phase === "question") button.querySelector(".tag").textContent = t("option.your_answer");
  }
  $("#answer-status").textContent = statusWords();
  countdown?.reword();
}
