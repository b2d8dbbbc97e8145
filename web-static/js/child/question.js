// A question: the options (shapes, and colours that never contradict a label), a countdown from the
// server's deadline that stays in view while scrolling, and the answer. A tap is kept until the server
// acknowledges it: "Sending…" then "Saved ✓". A tap made while the connection is down is sent when it comes
// back, if the question is still open.

import { $, clear, announce, progressDots } from "../dom.js";
import { renderOptions } from "../options.js";
import { state, services, show, record, saveSession } from "./store.js";

let countdownFrame = null;
let openTimer = null;
let lastTick = null;

export function stopTimers() {
  cancelAnimationFrame(countdownFrame);
  clearTimeout(openTimer);
}

export function renderDots() {
  clear($("#quiz-dots")).append(progressDots(state.results, state.questionCount));
}

function setStatus(text, kind = "") {
  const status = $("#answer-status");
  status.textContent = text;
  status.className = `answer-status ${kind}`;
}

/** Shows question `view`; `saved` is the option the server already has from this child (a snapshot says so). */
export function showQuestion(view, saved) {
  stopTimers();
  state.question = view;
  state.revealed = false;
  state.questionCount = view.count;
  state.chosen = null;
  show("quiz");
  $("#reveal").hidden = true;
  $("#reveal-result").hidden = true;
  $("#question-number").textContent = `Question ${view.index + 1} of ${view.count}`;
  $("#question-text").textContent = view.text;
  setStatus("");
  renderDots();
  const options = $("#options");
  renderOptions(options, view.options, choose);
  if (state.pending && state.pending.question !== view.index) {
    // An answer to a question that has closed since: it can no longer count.
    state.pending = null;
    saveSession();
  }
  if (saved !== null && saved !== undefined) {
    state.pending = null;
    saveSession();
    markChosen(saved);
    setStatus("Saved ✓ Waiting for the others…", "saved");
  } else if (state.pending) {
    markChosen(state.pending.option);
    setStatus("Sending…", "sending");
  }

  const waitMs = services.connection.clock.until(view.opensAt);
  const open = () => {
    $("#get-ready").hidden = true;
    options.hidden = false;
    record(`question:${view.index}:shown`);
    $("#quiz").scrollIntoView({ block: "start" });
    announce(`Question ${view.index + 1}: ${view.text}`);
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

export function runCountdown() {
  const view = state.question;
  const fill = $("#countdown-fill");
  const text = $("#countdown-text");
  let lastAnnounced = null;
  lastTick = null;
  if (!view.deadline) {
    fill.style.transform = "scaleX(1)";
    text.textContent = "No timer: take your time.";
    return;
  }
  const tick = () => {
    if (state.revealed || state.paused) return;
    const remaining = Math.max(0, view.deadline - services.connection.clock.now());
    fill.style.transform = `scaleX(${view.timeLimitMs ? remaining / view.timeLimitMs : 0})`;
    const seconds = Math.ceil(remaining / 1000);
    text.textContent = remaining > 0 ? `${seconds} s left` : "Time’s up!";
    if ((seconds === 10 || seconds === 5) && lastAnnounced !== seconds) {
      lastAnnounced = seconds;
      announce(`${seconds} seconds left`);
    }
    if (remaining > 0 && seconds <= 5 && seconds !== lastTick) {
      lastTick = seconds;
      services.sounds.play("tick");
    }
    if (remaining > 0) countdownFrame = requestAnimationFrame(tick);
    else {
      announce("Time’s up!");
      if (state.chosen === null) lockOptions();
    }
  };
  tick();
}

function choose(index) {
  if (state.chosen !== null || state.revealed || state.paused) return;
  state.pending = { question: state.question.index, option: index };
  saveSession();
  markChosen(index);
  sendPending();
}

/** Sends the answer waiting for an acknowledgement, if the connection is up; otherwise it waits for it. */
export function sendPending() {
  const pending = state.pending;
  if (!pending || !state.question || pending.question !== state.question.index || state.revealed) return;
  const sent = services.connection.send({ type: "answer", question: pending.question, option: pending.option });
  setStatus(sent ? "Sending…" : "Sending… Your answer goes as soon as we are back online.", "sending");
  if (!sent && !$("#connection-message").hidden) {
    $("#connection-text").textContent = "We lost the connection. Your answer is kept and goes as soon as we are back…";
  }
  record(sent ? `answer:${pending.question}:sent` : `answer:${pending.question}:waiting`);
}

export function acknowledged(ack) {
  if (state.pending && state.pending.question === ack.question) {
    state.pending = null;
    saveSession();
  }
  if (state.question && ack.question === state.question.index && !state.revealed) {
    markChosen(ack.option);
    setStatus("Saved ✓ Waiting for the others…", "saved");
    record(`answer:${ack.question}:saved`);
    announce("Saved. Waiting for the others.");
  }
}

/** A refusal of an answer: say so, and let the child tap again where that can still help. */
export function answerRefused(error) {
  const again = ["storage_unavailable", "not_open", "room_paused", "invalid_option"].includes(error.code);
  state.pending = null;
  saveSession();
  if (error.code === "already_answered") {
    // Only one option can be tapped here, so the answer the server has is this one.
    setStatus("Saved ✓ Waiting for the others…", "saved");
    return;
  }
  setStatus(error.message);
  announce(error.message);
  if (again) unlockChoice();
}

export function markChosen(index) {
  state.chosen = index;
  lockOptions();
  const button = $(`#options .option[data-index="${index}"]`);
  if (button) {
    button.classList.add("chosen");
    button.setAttribute("aria-pressed", "true");
    button.querySelector(".tag").textContent = "Your answer";
  }
}

function lockOptions() {
  $("#options").classList.add("locked");
  for (const button of document.querySelectorAll("#options .option")) button.disabled = true;
}

function unlockChoice() {
  if (state.revealed) return;
  state.chosen = null;
  $("#options").classList.remove("locked");
  for (const button of document.querySelectorAll("#options .option")) {
    button.disabled = false;
    button.classList.remove("chosen");
    button.removeAttribute("aria-pressed");
    button.querySelector(".tag").textContent = "";
  }
}

export function pauseQuestion() {
  cancelAnimationFrame(countdownFrame);
}

export function resumeQuestion(message) {
  if (state.question && message && message.deadline && !state.revealed) {
    state.question = { ...state.question, deadline: message.deadline, opensAt: message.opensAt ?? state.question.opensAt };
    runCountdown();
  }
}
