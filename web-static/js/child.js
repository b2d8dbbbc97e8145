// The child's page: join, listen to the story, answer the quiz, see how it went.

import { $, el, clear, showOnly, optionButton, progressDots, board, podium, announce } from "./dom.js";
import { RoomConnection } from "./connection.js";
import { NarrationPlayer } from "./narration.js";
import { friendlyName } from "./names.js";

const SECTIONS = ["join", "lobby", "preparing", "problem", "story", "quiz", "finished"];
const SESSION_KEY = "storycircle.session";

const state = {
  room: null,
  nickname: null,
  token: null,
  playerId: null,
  welcomed: false,
  questionCount: 0,
  results: [],
  score: 0,
  rank: null,
  question: null,
  chosen: null,
  revealed: false,
  paused: false,
};

let connection = null;
let countdownFrame = null;
let openTimer = null;

// Tests and curious teachers can read when things happened on this screen, in server time.
window.storycircle = { events: [] };
function record(event) {
  window.storycircle.events.push({ event, at: connection ? Math.round(connection.clock.now()) : Date.now() });
}

const player = new NarrationPlayer({
  container: $("#story-text"),
  clock: { now: () => connection.clock.now(), at: (at, fn) => connection.clock.at(at, fn) },
  onAudioBlocked: () => { $("#audio-unlock").hidden = false; },
  onSentence: (index) => record(`sentence:${index}`),
});

// ---- Session (the resume token survives a refresh or a dropped Wi-Fi) ----

function saveSession() {
  localStorage.setItem(SESSION_KEY, JSON.stringify({ room: state.room, token: state.token, nickname: state.nickname, playerId: state.playerId }));
}

function loadSession() {
  try {
    return JSON.parse(localStorage.getItem(SESSION_KEY) ?? "null");
  } catch {
    return null;
  }
}

function forgetSession() {
  localStorage.removeItem(SESSION_KEY);
  state.token = null;
}

// ---- Joining ----

function start() {
  const params = new URLSearchParams(location.search);
  const linkedRoom = params.get("room");
  if (linkedRoom) $("#room-code").value = linkedRoom.replace(/\D/g, "").slice(0, 6);
  $("#random-name").addEventListener("click", () => { $("#nickname").value = friendlyName(); $("#nickname").focus(); });
  $("#join-form").addEventListener("submit", submitJoin);
  $("#connection-retry").addEventListener("click", () => connection && connection.retry());
  $("#audio-unlock").addEventListener("click", () => { $("#audio-unlock").hidden = true; player.unlock(); });

  const session = loadSession();
  if (session && session.token && (!linkedRoom || linkedRoom === session.room)) {
    Object.assign(state, { room: session.room, token: session.token, nickname: session.nickname, playerId: session.playerId });
    showOnly(SECTIONS, "lobby");
    $("#lobby-name").textContent = session.nickname ?? "";
    $("#lobby-room").textContent = session.room;
    connect();
  } else {
    showOnly(SECTIONS, "join");
    (linkedRoom ? $("#nickname") : $("#room-code")).focus();
  }
}

function submitJoin(event) {
  event.preventDefault();
  const code = $("#room-code").value.replace(/\D/g, "");
  const nickname = $("#nickname").value.trim().replace(/\s+/g, " ");
  if (code.length !== 6) return joinError("The room code has 6 numbers. Look at the board and try again.");
  if (!nickname) return joinError("Please type a nickname, or press “Pick a name for me”.");
  $("#join-error").hidden = true;
  $("#join-button").disabled = true;
  state.room = code;
  state.nickname = nickname;
  state.token = null;
  connect();
}

function joinError(text) {
  showOnly(SECTIONS, "join");
  $("#join-button").disabled = false;
  const box = $("#join-error");
  box.textContent = text;
  box.hidden = false;
  announce(text);
}

function connect() {
  if (connection) connection.stop();
  state.welcomed = false;
  connection = new RoomConnection({
    hello: () => (state.token
      ? { type: "rejoin", room: state.room, token: state.token }
      : { type: "join", room: state.room, nickname: state.nickname }),
    onMessage: handle,
    onStatus: status,
  });
  connection.start();
}

function status({ state: connectionState, code }) {
  const banner = $("#connection-message");
  if (connectionState === "open") {
    banner.hidden = true;
    return;
  }
  if (connectionState === "reconnecting" && state.welcomed) {
    $("#connection-text").textContent = "We lost the connection. Reconnecting…";
    banner.hidden = false;
  } else if (connectionState === "closed") {
    if (code === 4002) {
      $("#connection-text").textContent = "You opened this room in another window, so this one stopped.";
      banner.hidden = false;
    } else if (code === 4001) {
      banner.hidden = true;
    } else if (!state.welcomed) {
      // The refusal itself (an error message) already explained; nothing more here.
      banner.hidden = true;
    }
  }
}

// ---- Messages ----

function handle(message) {
  switch (message.type) {
    case "welcome": return welcome(message);
    case "error": return refusal(message);
    case "preparing": return preparing(message);
    case "narration.plan": return narrationPlan(message);
    case "progress":
      if (!state.paused) player.schedule(message.sentence, message.at);
      return;
    case "narration.complete":
      player.finish();
      record("narration.complete");
      return;
    case "narration.error": return problem(message.message);
    case "quiz.unlock": return quizSoon(message.at);
    case "question": return showQuestion(message, null);
    case "answer.ack":
      $("#answer-status").textContent = "Answer saved ✓ Waiting for the others…";
      announce("Answer saved. Waiting for the others.");
      return;
    case "reveal": return showReveal(message);
    case "paused": return pause(message);
    case "resumed": return resume(message);
    case "finished": return finished(message);
    case "kicked":
      forgetSession();
      connection.stop();
      player.stop();
      joinError(message.message);
      return;
    default:
      return;
  }
}

function welcome(message) {
  state.welcomed = true;
  state.playerId = message.player.id;
  state.nickname = message.player.nickname;
  if (message.token) state.token = message.token;
  saveSession();
  $("#join-button").disabled = false;
  const room = message.room;
  state.questionCount = room.questionCount;
  $("#lobby-name").textContent = state.nickname;
  $("#lobby-room").textContent = room.code;
  $("#lobby-title-story").textContent = `Today’s story: ${room.title}`;
  $("#story-title").textContent = room.title;
  if (room.you) standing(room.you);
  state.paused = false;
  $("#paused").hidden = true;
  record("welcome");

  switch (room.phase) {
    case "lobby":
      showOnly(SECTIONS, "lobby");
      announce(`Hi ${state.nickname}! Waiting for your teacher to start the story.`);
      break;
    case "preparing":
      preparing(room.preparing ?? { ready: 0, total: 1 });
      break;
    case "error":
      problem(room.error);
      break;
    case "narrating":
      narrationPlan(room.plan);
      if (!room.paused) player.schedule(room.sentence, room.sentenceAt);
      break;
    case "question":
      showQuestion(room.question, room.yourAnswer ?? null);
      break;
    case "reveal":
      showQuestion(room.question, room.reveal.you?.option ?? null);
      showReveal(room.reveal);
      break;
    case "finished":
      finished(room.finished);
      break;
  }
  if (room.paused) pause({});
}

function refusal(error) {
  if (!state.welcomed) {
    if (error.code === "bad_token") {
      // The saved session no longer works (the room was restarted or ended): start over.
      forgetSession();
      return joinError("We could not find you in this room any more. Please join again.");
    }
    connection.stop();
    return joinError(error.message);
  }
  if (["already_answered", "too_late", "not_open", "question_closed", "invalid_option", "room_paused"].includes(error.code)) {
    $("#answer-status").textContent = error.message;
    announce(error.message);
    if (error.code === "room_paused" || error.code === "not_open") unlockChoice();
    return;
  }
  if (error.code === "session_replaced") return;
  announce(error.message);
}

function standing(you) {
  state.score = you.score;
  state.rank = you.rank;
  state.results = you.results ?? state.results;
  const text = `⭐ ${you.score} points · #${you.rank}`;
  $("#quiz-score").textContent = text;
  $("#story-score").textContent = you.score > 0 ? text : "";
  clear($("#quiz-dots")).append(progressDots(state.results, state.questionCount));
}

// ---- Story ----

function preparing({ ready, total }) {
  showOnly(SECTIONS, "preparing");
  const percent = total > 0 ? Math.round((ready / total) * 100) : 0;
  $("#preparing-bar .progress-fill").style.width = `${percent}%`;
  $("#preparing-bar").setAttribute("aria-valuenow", String(percent));
  if (ready === 0) announce("Pip is preparing your story.");
}

function narrationPlan(plan) {
  showOnly(SECTIONS, "story");
  $("#quiz-soon").hidden = true;
  player.load(plan);
  record("narration.plan");
  announce("The story is starting. Listen and read along!");
}

function problem(text) {
  player.stop();
  showOnly(SECTIONS, "problem");
  $("#problem-text").textContent = text;
  announce(text);
}

function quizSoon(at) {
  const box = $("#quiz-soon");
  box.hidden = false;
  box.textContent = "The story is over. The quiz is about to start!";
  box.scrollIntoView({ block: "center" });
  announce("The story is over. Get ready for the quiz!");
}

// ---- Quiz ----

function showQuestion(view, chosen) {
  cancelAnimationFrame(countdownFrame);
  clearTimeout(openTimer);
  state.question = view;
  state.chosen = chosen;
  state.revealed = false;
  state.questionCount = view.count;
  showOnly(SECTIONS, "quiz");
  $("#reveal").hidden = true;
  $("#question-number").textContent = `Question ${view.index + 1} of ${view.count}`;
  $("#question-text").textContent = view.text;
  $("#answer-status").textContent = "";
  clear($("#quiz-dots")).append(progressDots(state.results, state.questionCount));
  const options = clear($("#options"));
  options.classList.remove("locked");
  view.options.forEach((text, index) => options.append(optionButton(index, text, choose)));
  if (chosen !== null && chosen !== undefined) markChosen(chosen, "Your answer is saved ✓ Waiting for the others…");

  const waitMs = connection.clock.until(view.opensAt);
  const open = () => {
    $("#get-ready").hidden = true;
    options.hidden = false;
    record(`question:${view.index}:shown`);
    $("#quiz").scrollIntoView({ block: "start" });
    announce(`Question ${view.index + 1}: ${view.text}`);
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

function runCountdown() {
  const view = state.question;
  const fill = $("#countdown-fill");
  const text = $("#countdown-text");
  let lastAnnounced = null;
  if (!view.deadline) {
    fill.style.transform = "scaleX(1)";
    text.textContent = "No timer: take your time.";
    return;
  }
  const tick = () => {
    if (state.revealed || state.paused) return;
    const remaining = Math.max(0, view.deadline - connection.clock.now());
    fill.style.transform = `scaleX(${view.timeLimitMs ? remaining / view.timeLimitMs : 0})`;
    const seconds = Math.ceil(remaining / 1000);
    text.textContent = remaining > 0 ? `${seconds} s left` : "Time’s up!";
    if ((seconds === 10 || seconds === 5) && lastAnnounced !== seconds) {
      lastAnnounced = seconds;
      announce(`${seconds} seconds left`);
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
  if (!connection.send({ type: "answer", question: state.question.index, option: index })) {
    $("#answer-status").textContent = "We are reconnecting: tap again in a moment.";
    return;
  }
  markChosen(index, "Sending your answer…");
}

function markChosen(index, status) {
  state.chosen = index;
  lockOptions();
  const button = $(`#options .option[data-index="${index}"]`);
  if (button) {
    button.classList.add("chosen");
    button.setAttribute("aria-pressed", "true");
  }
  $("#answer-status").textContent = status;
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
  }
}

function showReveal(reveal) {
  cancelAnimationFrame(countdownFrame);
  state.revealed = true;
  lockOptions();
  const correct = $(`#options .option[data-index="${reveal.correctOption}"]`);
  const correctText = correct ? correct.querySelector(".label").textContent : "";
  if (correct) {
    correct.classList.add("correct");
    correct.querySelector(".mark").textContent = "✓";
  }
  const you = reveal.you;
  if (you && you.option !== null && you.option !== undefined && you.option !== reveal.correctOption) {
    const wrong = $(`#options .option[data-index="${you.option}"]`);
    if (wrong) {
      wrong.classList.add("wrong");
      wrong.querySelector(".mark").textContent = "✗";
    }
  }
  let title;
  if (!you || you.outcome === "missed") title = `⏰ Time’s up! The answer was “${correctText}”.`;
  else if (you.outcome === "correct") title = "🎉 Yes! That’s right!";
  else title = `Not quite. The answer was “${correctText}”.`;
  $("#reveal-title").textContent = title;
  $("#reveal-points").textContent = you && you.points > 0 ? `+${you.points} points` : "";
  const explanation = $("#reveal-explanation");
  explanation.hidden = !reveal.explanation;
  explanation.textContent = reveal.explanation ?? "";
  clear($("#reveal-top")).append(board(reveal.top, state.playerId));
  if (you) standing(you.standing);
  $("#answer-status").textContent = "";
  $("#countdown-text").textContent = "";
  $("#reveal").hidden = false;
  $("#reveal").scrollIntoView({ block: "nearest" });
  record(`reveal:${reveal.question}`);
  announce(`${title} ${you ? `You have ${you.standing.score} points.` : ""}`);
}

function pause(message) {
  state.paused = true;
  player.stop();
  cancelAnimationFrame(countdownFrame);
  $("#paused").hidden = false;
  announce("Your teacher paused. Hang on!");
}

function resume(message) {
  state.paused = false;
  $("#paused").hidden = true;
  if (state.question && message && message.deadline && !state.revealed) {
    state.question = { ...state.question, deadline: message.deadline, opensAt: message.opensAt ?? state.question.opensAt };
    runCountdown();
  }
  announce("We are going again!");
}

function finished(result) {
  player.stop();
  cancelAnimationFrame(countdownFrame);
  showOnly(SECTIONS, "finished");
  clear($("#finished-podium")).append(podium(result.podium));
  if (result.you) {
    state.results = result.you.results;
    $("#finished-you").textContent = `You came #${result.you.rank} with ${result.you.score} points!`;
    clear($("#finished-dots")).append(progressDots(result.you.results, state.questionCount || result.you.results.length));
  }
  record("finished");
  announce(`The quiz is over. ${$("#finished-you").textContent}`);
}

start();
