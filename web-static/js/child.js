// The child's page: join, listen to the story, answer the quiz, see how it went. This file feeds the room's
// messages to the store every page uses (room-store.js, through child/store.js); one `render(previous,
// state)` then draws the phase's screen (SCREENS, from child/*.js) or what moved within it (room-store.js
// `changes`). How far this page is in getting in is its join stage (child/join-stage.js).

import { $, announce } from "./dom.js";
import { RoomConnection } from "./connection.js";
import { CLOSE } from "./close-codes.js";
import { NarrationPlayer } from "./narration.js";
import { StoryPictures } from "./pictures.js";
import { SoundBoard } from "./sound.js";
import { ERROR, ANSWER_REFUSALS, errorText } from "./error-codes.js";
import { t, setLanguage, onLanguageChange, ownChoice, browserLanguage, languagePicker } from "./i18n.js";
import { changes } from "./room-store.js";
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

/** The connection banner says `key` (with `params`); it is worded again when the language changes. */
let bannerKey = null;
let bannerParams = {};
function banner(key, params = {}) {
  bannerKey = key;
  bannerParams = params;
  $("#connection-text").textContent = key ? t(key, params) : "";
  $("#connection-message").hidden = !key;
}
services.banner = banner;

function status({ state: connectionState, code, reason, retryAfter }) {
  if (connectionState === "open") {
    // The hello is on its way: until the welcome, a refusal is about getting in.
    advance(EVENT.OPEN);
    if (isIn(session.stage)) banner(null);
    return;
  }
  if (connectionState === "reconnecting") {
    if (reason === ERROR.RATE_LIMITED && retryAfter) {
      // Told when to try again: said kindly, and done by itself then.
      banner("connection.rate_limited", { count: retryAfter });
    } else if (code === CLOSE.TRY_AGAIN_LATER && !isIn(session.stage)) {
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

// ---- Messages: the room's state goes to the store, then to the one render; a moment is said as it comes ----

function handle(message) {
  if (message.type === "error") return refusal(message);
  const previous = room.state;
  room.apply(message);
  if (message.type === "welcome") welcome(message);
  else MOMENTS[message.type]?.(message);
  // A welcome replaces everything: drawn as from nothing.
  render(message.type === "welcome" ? null : previous, room.state);
  // "That's not me" is offered until this child's first answer.
  return showNotMe();
}

/** What the server says that is no part of the room's state, done once when it comes. */
const MOMENTS = {
  // After "That's not me", the server's names say the name is free and this connection picks again.
  names: (message) => (isGivingBack(session.stage) ? gaveBack() : names(message)),
  "narration.complete": narrationComplete,
  "quiz.unlock": quizSoon,
  kicked,
};

/** What only this browser keeps of a welcome: in, as whom, with which token; a tap too late to count. */
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
  record("welcome");
  // A tap still waiting to be sent counts only while its question is open; past that, it is dropped.
  if (session.pending && room.state.phase !== "question") {
    session.pending = null;
    saveSession();
  }
}

// ---- The one render: the room's screens from its state ----

/**
 * Each phase's screen: `draw` it anew from the state (`previous`: what the page showed, null after a
 * welcome), or `reword` it (the language changed: the words again, nothing replayed, nothing re-sent).
 */
const SCREENS = {
  lobby: { draw: (state) => showLobby(state), reword: (state) => showLobby(state, { quiet: true }) },
  preparing: {
    draw: (state) => preparing(state.preparing ?? { ready: 0, total: 1 }),
    reword: (state) => preparing(state.preparing ?? { ready: 0, total: 1 }, { quiet: true }),
  },
  error: { draw: () => problem(), reword: () => problem({ quiet: true }) },
  narrating: {
    draw: (state, previous) => {
      narrationPlan(state.plan);
      // A story joined in the middle is read from where the room is.
      if (!previous && !state.paused) progress({ sentence: state.sentence, at: state.sentenceAt });
    },
    reword: () => rewordStory(),
  },
  question: { draw: (state) => showQuestion(state.question, state.yourAnswer), reword: () => rewordQuestion() },
  reveal: {
    draw: (state, previous) => {
      if (previous) {
        revealComing(state.reveal, previous);
      } else {
        // The question as it was asked, with the child's own answer marked, then its answer.
        showQuestion(state.question, state.reveal.you?.option ?? null);
      }
      showReveal(state.reveal);
    },
    reword: (state) => { rewordQuestion(); showReveal(state.reveal, { quiet: true }); },
  },
  finished: { draw: (state) => finished(state.finished), reword: (state) => finished(state.finished, { quiet: true }) },
};

function screenOf(state) {
  return SCREENS[state.phase] ?? SCREENS.lobby;
}

/** The page from the room's state: `previous` is what it shows now (null: nothing yet). */
function render(previous, state) {
  if (previous === state) return;
  const change = changes(previous, state);
  if (change.language) followRoomLanguage();
  if (!previous) {
    $("#story-title").textContent = state.title;
    renderScore();
    $("#paused").hidden = true;
    stopTimers();
    services.player.stop();
  }
  if (change.screen) {
    // A new screen while the room is not paused (revealed during a pause, say) is not paused either.
    if (!state.paused) $("#paused").hidden = true;
    screenOf(state).draw(state, previous);
  } else {
    if (change.preparing) preparing(state.preparing);
    for (const sentence of change.sentences) narrationSentence({ sentence });
    if (change.progress) progress({ sentence: state.sentence, at: state.sentenceAt });
    if (change.answer) acknowledged({ question: state.question.index, option: state.yourAnswer });
  }
  if (change.paused === true) pause();
  if (change.paused === false && !change.screen) resume();
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
  if (bannerKey) banner(bannerKey, bannerParams);
  rewordJoin();
  rewordPicker();
  if (!isIn(session.stage)) return;
  renderScore();
  screenOf(room.state).reword(room.state);
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
