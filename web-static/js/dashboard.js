// The dashboard, for the projector: `/dashboard#room=CODE&token=DASHBOARD-TOKEN`. With the teacher token
// it also shows the controls. One screen that is never scrolled: every phase fits 1920×1080 and 1280×720.
// This file feeds the room's messages to the store every page uses (room-store.js, through
// dashboard/store.js), then to the screens (dashboard/*.js), which render from it.

import { $ } from "./dom.js";
import { RoomConnection, fragmentParameters } from "./connection.js";
import { NarrationPlayer } from "./narration.js";
import { StoryPictures } from "./pictures.js";
import { TeacherControls } from "./controls.js";
import { SoundBoard } from "./sound.js";
import { LINK_REFUSALS, errorText } from "./error-codes.js";
import { t, tParts, setLanguage, onLanguageChange, browserLanguage } from "./i18n.js";
import { showSnapshot } from "./snapshot.js";
import { room, services } from "./dashboard/store.js";
import { renderLobby, resetLobby, loadQRCode } from "./dashboard/lobby.js";
import { preparing, story, sentence, progress, problem } from "./dashboard/story.js";
import { question, reveal, runCountdown, pauseCountdown, stopTimers, rewordQuestion } from "./dashboard/question.js";
import { finished } from "./dashboard/podium.js";
import { renderSide } from "./dashboard/side.js";

// The projector speaks the room's language; until the welcome says which, the browser's.
await setLanguage(browserLanguage());

const params = fragmentParameters();
const code = params.get("room");
const token = params.get("token");
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

function handle(message) {
  if (message.type === "error") {
    if (services.controls && !LINK_REFUSALS.has(message.code)) services.controls.refused(message);
    else $("#phase").textContent = errorText(message, { code });
    return;
  }
  room.apply(message);
  switch (message.type) {
    case "welcome": welcome(message); break;
    case "lobby": renderLobby(); break;
    case "preparing": preparing(message); break;
    case "narration.plan": story(message); break;
    case "narration.sentence": sentence(message); break;
    case "progress": progress(message); break;
    case "narration.complete": services.player.finish(); break;
    case "narration.error": problem(); break;
    case "room":
      setLanguage(room.state.language);
      loadQRCode(room.state.code, room.state.language);
      break;
    case "question": question(message); break;
    case "reveal": reveal(message); break;
    case "paused": services.player.stop(); pauseCountdown(); break;
    case "resumed": runCountdown(); break;
    case "finished": finished(message); break;
  }
  renderSide();
}

/** A welcome replaces everything: the screen is rebuilt from the snapshot. */
function welcome(message) {
  const state = room.state;
  $("#title").textContent = state.title;
  $("#join-code").textContent = state.code;
  setLanguage(state.language);
  joinText();
  if (message.role === "teacher" && !services.controls) {
    $("#controls").hidden = false;
    $("#side").classList.add("has-controls");
    services.controls = new TeacherControls($("#controls"), (command) => services.connection.send(command), { room: code, token });
  }
  loadQRCode(state.code, state.language);
  services.player.stop();
  stopTimers();
  resetLobby();
  showSnapshot(state, { lobby: renderLobby, preparing, problem, story, progress, question, reveal, finished });
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
  switch (state.phase) {
    case "lobby": renderLobby({ quiet: true }); break;
    case "error": problem(); break;
    case "question": rewordQuestion(); break;
    case "reveal": reveal(state.reveal, { quiet: true }); break;
    case "finished": finished(state.finished, { quiet: true }); break;
    default: break;
  }
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
