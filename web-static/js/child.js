// The child's page: join, listen to the story, answer the quiz, see how it went. This file feeds the room's
// messages to the store every page uses (room-store.js, through child/store.js), then to the screens
// (child/*.js), which render from it.

import { $, announce } from "./dom.js";
import { RoomConnection } from "./connection.js";
import { CLOSE } from "./close-codes.js";
import { NarrationPlayer } from "./narration.js";
import { SoundBoard } from "./sound.js";
import { ERROR, ANSWER_REFUSALS } from "./error-codes.js";
import { showSnapshot } from "./snapshot.js";
import { room, session, services, record, saveSession, renderScore } from "./child/store.js";
import { startJoin, joinRefused, kicked } from "./child/join.js";
import { showLobby } from "./child/lobby.js";
import { preparing, narrationPlan, progress, narrationComplete, problem, quizSoon } from "./child/story.js";
import { showQuestion, acknowledged, answerRefused, pauseQuestion, resumeQuestion, stopTimers } from "./child/question.js";
import { showReveal } from "./child/reveal.js";
import { finished } from "./child/podium.js";

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
  session.welcomed = false;
  services.connection = new RoomConnection({
    hello: () => (session.token
      ? { type: "rejoin", room: session.room, token: session.token }
      : { type: "join", room: session.room, nickname: session.nickname }),
    room: () => session.room,
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
    session.helloPending = true;
    if (session.welcomed) banner.hidden = true;
    return;
  }
  if (connectionState === "reconnecting") {
    if (code === CLOSE.TRY_AGAIN_LATER && !session.welcomed) {
      text.textContent = "We could not save your place yet. Trying again…";
      banner.hidden = false;
    } else if (!session.welcomed) {
      // Not in yet: the server is busy (HTTP 429 or 503) or out of reach. The page keeps trying.
      text.textContent = "Still connecting to your class… trying again.";
      banner.hidden = false;
    } else {
      text.textContent = session.pending
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
  if (message.type === "error") return refusal(message);
  room.apply(message);
  switch (message.type) {
    case "welcome": return welcome(message);
    case "preparing": return preparing(message);
    case "narration.plan": return narrationPlan(message);
    case "progress": return progress(message);
    case "narration.complete": return narrationComplete();
    case "narration.error": return problem(message.message);
    case "quiz.unlock": return quizSoon();
    case "question": return showQuestion(message, null);
    case "answer.ack": return acknowledged(message);
    case "reveal": return showReveal(message);
    case "paused": return pause();
    case "resumed": return resume();
    case "finished": return finished(message);
    case "kicked": return kicked(message);
    default: return undefined;
  }
}

/** A welcome may come at any time (a reconnect, or the server rebuilding the room): it replaces everything. */
function welcome(message) {
  session.welcomed = true;
  session.helloPending = false;
  session.tryingBlockedToken = false;
  session.playerId = message.player.id;
  session.nickname = message.player.nickname;
  if (message.token) session.token = message.token;
  saveSession();
  $("#join-button").disabled = false;
  $("#connection-message").hidden = true;
  const state = room.state;
  $("#story-title").textContent = state.title;
  renderScore();
  $("#paused").hidden = true;
  stopTimers();
  services.player.stop();
  record("welcome");
  // A tap still waiting to be sent counts only while its question is open; past that, it is dropped.
  if (session.pending && state.phase !== "question") {
    session.pending = null;
    saveSession();
  }
  showSnapshot(state, {
    lobby: showLobby, preparing, problem, story: narrationPlan, progress,
    question: showQuestion, reveal: showReveal, finished,
  });
  if (state.paused) pause();
}

function refusal(error) {
  if (session.helloPending || !session.welcomed) return joinRefused(error);
  if (ANSWER_REFUSALS.has(error.code)) return answerRefused(error);
  if (error.code === ERROR.SESSION_REPLACED) return undefined;
  announce(error.message);
  return undefined;
}

function pause() {
  services.player.stop();
  pauseQuestion();
  $("#paused").hidden = false;
  announce("Your teacher paused. Hang on!");
}

function resume() {
  $("#paused").hidden = true;
  resumeQuestion();
  announce("We are going again!");
}

$("#connection-retry").addEventListener("click", () => services.connection && services.connection.retry());
$("#audio-unlock").addEventListener("click", () => { $("#audio-unlock").hidden = true; services.player.unlock(); });
startJoin(connect);
