// The child's page: join, listen to the story, answer the quiz, see how it went. This file connects the
// room's messages to the screens (child/*.js), which share one state (child/store.js).

import { $, announce } from "./dom.js";
import { RoomConnection } from "./connection.js";
import { CLOSE } from "./close-codes.js";
import { NarrationPlayer } from "./narration.js";
import { SoundBoard } from "./sound.js";
import { state, services, show, record, saveSession, setStanding } from "./child/store.js";
import { startJoin, joinRefused, kicked } from "./child/join.js";
import { showLobby } from "./child/lobby.js";
import { preparing, narrationPlan, progress, narrationComplete, problem, quizSoon } from "./child/story.js";
import { showQuestion, acknowledged, answerRefused, pauseQuestion, resumeQuestion, stopTimers } from "./child/question.js";
import { showReveal } from "./child/reveal.js";
import { finished } from "./child/podium.js";

const ANSWER_ERRORS = ["already_answered", "too_late", "not_open", "question_closed", "invalid_option", "room_paused", "storage_unavailable"];

services.player = new NarrationPlayer({
  container: $("#story-text"),
  clock: { now: () => services.connection.clock.now(), at: (at, fn) => services.connection.clock.at(at, fn) },
  onAudioBlocked: () => { $("#audio-unlock").hidden = false; },
  onSentence: (index) => record(`sentence:${index}`),
});
// Phones stay silent unless the child turns sound on.
services.sounds = new SoundBoard({ key: "storycircle.sound.child", defaultOn: false, button: $("#sound-toggle") });

function connect() {
  if (services.connection) services.connection.stop();
  state.welcomed = false;
  services.connection = new RoomConnection({
    hello: () => (state.token
      ? { type: "rejoin", room: state.room, token: state.token }
      : { type: "join", room: state.room, nickname: state.nickname }),
    room: () => state.room,
    onMessage: handle,
    onStatus: status,
  });
  window.storycircle.connection = services.connection;
  services.connection.start();
}

function status({ state: connectionState, code }) {
  const banner = $("#connection-message");
  const text = $("#connection-text");
  if (connectionState === "open") {
    // The hello is on its way: until the welcome, a refusal is about getting in.
    state.helloPending = true;
    if (state.welcomed) banner.hidden = true;
    return;
  }
  if (connectionState === "reconnecting") {
    if (code === CLOSE.TRY_AGAIN_LATER && !state.welcomed) {
      text.textContent = "We could not save your place yet. Trying again…";
      banner.hidden = false;
    } else if (!state.welcomed) {
      // Not in yet: the server is busy (HTTP 429 or 503) or out of reach. The page keeps trying.
      text.textContent = "Still connecting to your class… trying again.";
      banner.hidden = false;
    } else {
      text.textContent = state.pending
        ? "We lost the connection. Your answer is kept and goes as soon as we are back…"
        : "We lost the connection. Reconnecting…";
      banner.hidden = false;
    }
    return;
  }
  if (connectionState === "closed") {
    if (code === CLOSE.REPLACED) {
      text.textContent = "You opened this room in another window, so this one stopped.";
      banner.hidden = false;
    } else {
      // Kicked, or refused: the message itself explains.
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
    case "progress": return progress(message, state.paused);
    case "narration.complete": return narrationComplete();
    case "narration.error": return problem(message.message);
    case "quiz.unlock": return quizSoon();
    case "question": return showQuestion(message, null);
    case "answer.ack": return acknowledged(message);
    case "reveal": return showReveal(message);
    case "paused": return pause();
    case "resumed": return resume(message);
    case "finished": return finished(message);
    case "kicked": return kicked(message);
    default: return undefined;
  }
}

/** A welcome may come at any time (a reconnect, or the server rebuilding the room): it replaces everything. */
function welcome(message) {
  state.welcomed = true;
  state.helloPending = false;
  state.tryingBlockedToken = false;
  state.playerId = message.player.id;
  state.nickname = message.player.nickname;
  if (message.token) state.token = message.token;
  saveSession();
  $("#join-button").disabled = false;
  $("#connection-message").hidden = true;
  const room = message.room;
  state.title = room.title;
  state.questionCount = room.questionCount;
  $("#story-title").textContent = room.title;
  if (room.you) setStanding(room.you);
  state.paused = false;
  $("#paused").hidden = true;
  stopTimers();
  services.player.stop();
  record("welcome");
  // A tap still waiting to be sent counts only while its question is open; past that, it is dropped.
  if (state.pending && room.phase !== "question") {
    state.pending = null;
    saveSession();
  }

  switch (room.phase) {
    case "lobby": showLobby(room); break;
    case "preparing": preparing(room.preparing ?? { ready: 0, total: 1 }); break;
    case "error": problem(room.error); break;
    case "narrating":
      narrationPlan(room.plan);
      if (!room.paused) services.player.schedule(room.sentence, room.sentenceAt);
      break;
    case "question": showQuestion(room.question, room.yourAnswer ?? null); break;
    case "reveal":
      showQuestion(room.question, room.reveal.you?.option ?? null);
      showReveal(room.reveal);
      break;
    case "finished": finished(room.finished); break;
    default: show("lobby");
  }
  if (room.paused) pause();
}

function refusal(error) {
  if (state.helloPending || !state.welcomed) return joinRefused(error);
  if (ANSWER_ERRORS.includes(error.code)) return answerRefused(error);
  if (error.code === "session_replaced") return undefined;
  announce(error.message);
  return undefined;
}

function pause() {
  state.paused = true;
  services.player.stop();
  pauseQuestion();
  $("#paused").hidden = false;
  announce("Your teacher paused. Hang on!");
}

function resume(message) {
  state.paused = false;
  $("#paused").hidden = true;
  resumeQuestion(message);
  announce("We are going again!");
}

$("#connection-retry").addEventListener("click", () => services.connection && services.connection.retry());
$("#audio-unlock").addEventListener("click", () => { $("#audio-unlock").hidden = true; services.player.unlock(); });
startJoin(connect);
