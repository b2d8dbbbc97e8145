// The child's page: join, listen to the story, answer the quiz, see how it went. This file feeds the room's
// messages to the store every page uses (room-store.js, through child/store.js), then to the screens
// (child/*.js), which render from it.

import { $, announce } from "./dom.js";
import { RoomConnection } from "./connection.js";
import { CLOSE } from "./close-codes.js";
import { NarrationPlayer } from "./narration.js";
import { StoryPictures } from "./pictures.js";
import { SoundBoard } from "./sound.js";
import { ERROR, ANSWER_REFUSALS, errorText } from "./error-codes.js";
import { t, setLanguage, onLanguageChange, ownChoice, browserLanguage, languagePicker } from "./i18n.js";
import { showSnapshot } from "./snapshot.js";
import { room, session, services, record, saveSession, renderScore, advance } from "./child/store.js";
import { STAGE, EVENT, isIn, awaitsWelcome, isPicking, isGivingBack } from "./child/join-stage.js";
import { startJoin, joinRefused, kicked, rewordJoin, showNotMe, gaveBack, notMeRefused } from "./child/join.js";
import { names, forgetPicker, rewordPicker } from "./child/picker.js";
import { showLobby } from "./child/lobby.js";
import { preparing, narrationPlan, narrationSentence, progress, narrationComplete, problem, quizSoon, rewordStory } from "./child/story.js";
import { showQuestion, acknowledged, answerRefused, pauseQuestion, resumeQuestion, stopTimers, rewordQuestion } from "./child/question.js";
import { showReveal, revealComing } from "./child/reveal.js";
import { finished } from "./child/podium.js";

// The words come first: the child's own choice on this phone, else (until the room says its language)
// the link's (`/?room=CODE&lang=es`), else the browser's, else English.
await setLanguage(ownChoice() ?? new URLSearchParams(location.search).get("lang") ?? browserLanguage());
languagePicker($("#language-picker"), (picked) => setLanguage(picked ?? room.state.language ?? browserLanguage()));

services.pictures = new StoryPictures({ before: $("#story-text"), room: new URLSearchParams(location.search).get("room"), phone: true });
services.player = new NarrationPlayer({
  container: $("#story-text"),
  clock: { now: () => services.connection.clock.now(), at: (at, fn) => services.connection.clock.at(at, fn) },
  onAudioBlocked: () => { $("#audio-unlock").hidden = false; },
  onSentence: (index) => { services.pictures.show(index); record(`sentence:${index}`); },
});
// Phones stay silent unless the child turns sound on.
services.sounds = new SoundBoard({ key: "storycircle.sound.child", defaultOn: false, button: $("#sound-toggle") });

function connect() {
  if (services.connection) services.connection.stop();
  services.connection = new RoomConnection({
    hello: () => {
      if (session.token) return { type: "rejoin", room: session.room, token: session.token };
      // Dropped while the child types a nickname on the connection that asked for the names: asked again.
      if (session.stage === STAGE.NAMING) return { type: "names", room: session.room };
      // A class room's name-picker asks for the names again after a drop (the tap, if any, was lost).
      if (isPicking(session.stage)) {
        session.member = null;
        return { type: "names", room: session.room };
      }
      return { type: "join", room: session.room, nickname: session.nickname };
    },
    room: () => session.room,
    onMessage: handle,
    onStatus: status,
  });
  window.storycircle.connection = services.connection;
  services.connection.start();
}

/** The connection banner says `key`; it is worded again when the language changes. */
let bannerKey = null;
function banner(key) {
  bannerKey = key;
  $("#connection-text").textContent = key ? t(key) : "";
  $("#connection-message").hidden = !key;
}
services.banner = banner;

function status({ state: connectionState, code }) {
  if (connectionState === "open") {
    // The hello is on its way: until the welcome, a refusal is about getting in.
    advance(EVENT.OPEN);
    if (isIn(session.stage)) banner(null);
    return;
  }
  if (connectionState === "reconnecting") {
    if (code === CLOSE.TRY_AGAIN_LATER && !isIn(session.stage)) {
      banner("connection.saving_place");
    } else if (!isIn(session.stage)) {
      // Not in yet: the server is busy (HTTP 429 or 503) or out of reach. The page keeps trying.
      banner("connection.still_connecting");
    } else {
      banner(session.pending ? "connection.lost_answer_kept" : "connection.lost");
    }
    return;
  }
  if (connectionState === "closed") {
    if (code === CLOSE.REPLACED) {
      banner("connection.replaced");
    } else {
      // Kicked, or refused: the message itself explains.
      banner(null);
    }
  }
}

// ---- Messages ----

function handle(message) {
  if (message.type === "error") return refusal(message);
  if (message.type === "reveal") revealComing(message);
  room.apply(message);
  follow(message);
  // "That's not me" is offered until this child's first answer.
  return showNotMe();
}

function follow(message) {
  switch (message.type) {
    case "welcome": return welcome(message);
    // After "That's not me", the server's names say the name is free and this connection picks again.
    case "names": return isGivingBack(session.stage) ? gaveBack() : names(message);
    case "preparing": return preparing(message);
    case "narration.plan": return narrationPlan(message);
    case "narration.sentence": return narrationSentence(message);
    case "progress": return progress(message);
    case "narration.complete": return narrationComplete();
    case "narration.error": return problem();
    case "room": return followRoomLanguage();
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
  // A "That's not me" the server never read (the connection dropped first) can be pressed again.
  advance(EVENT.WELCOME);
  if (session.member) session.classMember = session.member;
  forgetPicker();
  session.playerId = message.player.id;
  session.nickname = message.player.nickname;
  if (message.token) session.token = message.token;
  saveSession();
  $("#join-button").disabled = false;
  banner(null);
  const state = room.state;
  $("#story-title").textContent = state.title;
  followRoomLanguage();
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
  if (awaitsWelcome(session.stage)) return joinRefused(error);
  if (ANSWER_REFUSALS.has(error.code)) return answerRefused(error);
  if (error.code === ERROR.SESSION_REPLACED) return undefined;
  if (error.code === ERROR.NOT_ME_AFTER_ANSWER) return notMeRefused();
  announce(errorText(error));
  return undefined;
}

/** The room's language, unless this child picked their own on this phone. */
function followRoomLanguage() {
  if (!ownChoice() && room.state.language) setLanguage(room.state.language);
}

/** Words again, in the new language, for the screen as it is (nothing replayed, nothing re-sent). */
onLanguageChange(() => {
  if (bannerKey) banner(bannerKey);
  rewordJoin();
  rewordPicker();
  if (!isIn(session.stage)) return;
  const state = room.state;
  renderScore();
  switch (state.phase) {
    case "lobby": showLobby(state, { quiet: true }); break;
    case "preparing": preparing(state.preparing ?? { ready: 0, total: 1 }, { quiet: true }); break;
    case "error": problem({ quiet: true }); break;
    case "narrating": rewordStory(); break;
    case "question": rewordQuestion(); break;
    case "reveal": rewordQuestion(); showReveal(state.reveal, { quiet: true }); break;
    case "finished": finished(state.finished, { quiet: true }); break;
    default: break;
  }
});

function pause() {
  services.player.stop();
  pauseQuestion();
  $("#paused").hidden = false;
  announce(t("paused.text"));
}

function resume() {
  $("#paused").hidden = true;
  resumeQuestion();
  announce(t("resumed.text"));
}

$("#connection-retry").addEventListener("click", () => services.connection && services.connection.retry());
$("#audio-unlock").addEventListener("click", () => { $("#audio-unlock").hidden = true; services.player.unlock(); });
startJoin(connect);
