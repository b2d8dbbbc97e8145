// The dashboard, for the projector: `/dashboard#room=CODE&token=DASHBOARD-TOKEN`. With the teacher token
// it also shows the controls. One screen that is never scrolled: every phase fits 1920×1080 and 1280×720.
// This file feeds the room's messages to the store every page uses (room-store.js, through
// dashboard/store.js); one `render(previous, state)` then draws the phase's screen (SCREENS, from
// dashboard/*.js) or what moved within it (room-store.js `changes`).

import { $ } from "./dom.js";
import { RoomConnection } from "./connection.js";
import { takeToken, dashboardSlot } from "./page-keys.js";
import { NarrationPlayer } from "./narration.js";
import { StoryPictures } from "./pictures.js";
import { TeacherControls } from "./controls.js";
import { SoundBoard } from "./sound.js";
import { LINK_REFUSALS, errorText } from "./error-codes.js";
import { t, tParts, setLanguage, onLanguageChange, browserLanguage } from "./i18n.js";
import { changes } from "./room-store.js";
import { room, services } from "./dashboard/store.js";
import { renderLobby, resetLobby, loadQRCode } from "./dashboard/lobby.js";
import { preparing, story, progress, problem } from "./dashboard/story.js";
import { question, reveal, runCountdown, pauseCountdown, stopTimers, rewordQuestion } from "./dashboard/question.js";
import { finished } from "./dashboard/podium.js";
import { renderSide } from "./dashboard/side.js";

// The token leaves the address at once, before anything can wait; a reload in this tab finds it in the
// tab's session (page-keys.js).
const { params, token } = takeToken((fragment) => dashboardSlot(fragment.get("room")));
// The projector speaks the room's language; until the welcome says which, the browser's.
await setLanguage(browserLanguage());
const code = params.get("room");
services.token = token;

services.connection = new RoomConnection({
  hello: () => ({ type: "watch", room: code, token }),
  room: () => code,
  onMessage: handle,
  onStatus: ({ state }) => {
    $("#connection-message").hidden = state === "open" || state === "connecting";
    connectionKey = state === "closed" ? "connection.dashboard_link_bad" : "connection.lost_server";
    $("#connection-text").textContent = t(connectionKey);
  },
});
services.pictures = new StoryPictures({ before: $("#story-text"), room: new URLSearchParams(location.hash.slice(1)).get("room"), phone: false });
services.player = new NarrationPlayer({
  container: $("#story-text"),
  onSentence: (index) => services.pictures.show(index),
  clock: { now: () => services.connection.clock.now(), at: (at, fn) => services.connection.clock.at(at, fn) },
  onAudioBlocked: () => { $("#audio-unlock").hidden = false; },
});
// The projector plays sound unless the teacher mutes it (remembered on this computer).
services.sounds = new SoundBoard({ key: "storycircle.sound.projector", defaultOn: true, button: $("#sound-toggle") });
window.storycircle.connection = services.connection;

let connectionKey = "connection.lost_server";

// ---- Messages: the room's state goes to the store, then to the one render ----

function handle(message) {
  if (message.type === "error") {
    if (services.controls && !LINK_REFUSALS.has(message.code)) services.controls.refused(message);
    else $("#phase").textContent = errorText(message, { code });
    return;
  }
  const previous = room.state;
  room.apply(message);
  if (message.type === "welcome") welcome(message);
  // The story is over: the player lets its last sentence end (no part of the room's state).
  if (message.type === "narration.complete") services.player.finish();
  // A welcome replaces everything: drawn as from nothing.
  render(message.type === "welcome" ? null : previous, room.state);
  renderSide();
}

/** The teacher's controls, the first time a teacher's welcome comes. */
function welcome(message) {
  if (message.role === "teacher" && !services.controls) {
    $("#controls").hidden = false;
    $("#side").classList.add("has-controls");
    services.controls = new TeacherControls($("#controls"), (command) => services.connection.send(command), { room: code, token });
  }
}

// ---- The one render: the projector's screens from the room's state ----

/**
 * Each phase's screen: `draw` it anew from the state (`previous`: what the screen showed, null after a
 * welcome), or `reword` it (the room's language changed: the words again, nothing replayed).
 */
const SCREENS = {
  lobby: { draw: () => renderLobby(), reword: () => renderLobby({ quiet: true }) },
  preparing: { draw: (state) => preparing(state.preparing ?? { ready: 0, total: 1 }), reword: () => {} },
  error: { draw: () => problem(), reword: () => problem() },
  narrating: {
    draw: (state, previous) => {
      story(state.plan);
      // A story joined in the middle is read from where the room is.
      if (!previous && !state.paused) progress({ sentence: state.sentence, at: state.sentenceAt });
    },
    reword: () => {},
  },
  question: { draw: (state) => question(state.question), reword: () => rewordQuestion() },
  reveal: {
    draw: (state, previous) => {
      // The question as it was asked, then its answer.
      if (!previous) question(state.question);
      reveal(state.reveal);
    },
    reword: (state) => reveal(state.reveal, { quiet: true }),
  },
  finished: { draw: (state) => finished(state.finished), reword: (state) => finished(state.finished, { quiet: true }) },
};

function screenOf(state) {
  return SCREENS[state.phase] ?? SCREENS.lobby;
}

/** The projector from the room's state: `previous` is what it shows now (null: nothing yet). */
function render(previous, state) {
  if (previous === state) return;
  const change = changes(previous, state);
  if (change.language) {
    setLanguage(state.language);
    loadQRCode(state.code, state.language);
  }
  if (!previous) {
    $("#title").textContent = state.title;
    $("#join-code").textContent = state.code;
    joinText();
    services.player.stop();
    stopTimers();
    resetLobby();
  }
  if (change.screen) {
    screenOf(state).draw(state, previous);
  } else {
    if (change.players && state.phase === "lobby") renderLobby();
    if (change.preparing) preparing(state.preparing);
    for (const sentence of change.sentences) services.player.append(sentence);
    if (change.progress) progress({ sentence: state.sentence, at: state.sentenceAt });
  }
  if (change.paused === true) {
    services.player.stop();
    pauseCountdown();
  }
  if (change.paused === false && !change.screen) runCountdown();
}

/** "Join at HOST with the code" and the story's title with its number of questions. */
function joinText() {
  $("#join-text").replaceChildren(...tParts("dash.join_at", { url: Object.assign(document.createElement("strong"), { textContent: location.host, dir: "ltr" }) }));
  const state = room.state;
  if (state.title !== null) $("#lobby-story").textContent = t("dash.lobby_story", { title: state.title, count: state.questionCount });
}

/** Words again, in the room's new language, for the screen as it is (nothing replayed). */
onLanguageChange(() => {
  const state = room.state;
  $("#title").textContent = state.title ?? t("app.name");
  $("#connection-text").textContent = t(connectionKey);
  joinText();
  screenOf(state).reword(state);
  services.controls?.reword();
  renderSide();
});

$("#title").textContent = t("app.name");
joinText();
if (!code || !token) {
  $("#phase").textContent = t("connection.dashboard_link_missing");
} else {
  $("#join-code").textContent = code;
  $("#connection-retry").addEventListener("click", () => services.connection.retry());
  $("#audio-unlock").addEventListener("click", () => { $("#audio-unlock").hidden = true; services.player.unlock(); });
  services.connection.start();
}
