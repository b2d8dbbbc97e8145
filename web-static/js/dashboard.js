// The dashboard, for the projector: `/dashboard#room=CODE&token=DASHBOARD-TOKEN`. With the teacher token
// it also shows the controls. One screen that is never scrolled: every phase fits 1920×1080 and 1280×720.
// This file feeds the room's messages to the store every page uses (room-store.js, through
// dashboard/store.js), then to the screens (dashboard/*.js), which render from it.

import { $ } from "./dom.js";
import { RoomConnection, fragmentParameters } from "./connection.js";
import { NarrationPlayer } from "./narration.js";
import { TeacherControls } from "./controls.js";
import { SoundBoard } from "./sound.js";
import { LINK_REFUSALS } from "./error-codes.js";
import { showSnapshot } from "./snapshot.js";
import { room, services } from "./dashboard/store.js";
import { renderLobby, resetLobby, loadQRCode } from "./dashboard/lobby.js";
import { preparing, story, progress, problem } from "./dashboard/story.js";
import { question, reveal, runCountdown, pauseCountdown, stopTimers } from "./dashboard/question.js";
import { finished } from "./dashboard/podium.js";
import { renderSide } from "./dashboard/side.js";

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
    $("#connection-text").textContent = state === "closed"
      ? "This dashboard link is not valid (or the room is gone). Check the link the server printed."
      : "We lost the connection to the server. Reconnecting…";
  },
});
services.player = new NarrationPlayer({
  container: $("#story-text"),
  clock: { now: () => services.connection.clock.now(), at: (at, fn) => services.connection.clock.at(at, fn) },
  onAudioBlocked: () => { $("#audio-unlock").hidden = false; },
});
// The projector plays sound unless the teacher mutes it (remembered on this computer).
services.sounds = new SoundBoard({ key: "storycircle.sound.projector", defaultOn: true, button: $("#sound-toggle") });
window.storycircle.connection = services.connection;

function handle(message) {
  if (message.type === "error") {
    if (services.controls && !LINK_REFUSALS.has(message.code)) services.controls.refused(message);
    else $("#phase").textContent = message.message;
    return;
  }
  room.apply(message);
  switch (message.type) {
    case "welcome": welcome(message); break;
    case "lobby": renderLobby(); break;
    case "preparing": preparing(message); break;
    case "narration.plan": story(message); break;
    case "progress": progress(message); break;
    case "narration.complete": services.player.finish(); break;
    case "narration.error": problem(message.message); break;
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
  $("#join-url").textContent = `${location.host}`;
  $("#lobby-story").textContent = `${state.title} · ${state.questionCount} ${state.questionCount === 1 ? "question" : "questions"}`;
  if (message.role === "teacher" && !services.controls) {
    $("#controls").hidden = false;
    $("#side").classList.add("has-controls");
    services.controls = new TeacherControls($("#controls"), (command) => services.connection.send(command), { room: code, token });
  }
  loadQRCode(state.code);
  services.player.stop();
  stopTimers();
  resetLobby();
  showSnapshot(state, { lobby: renderLobby, preparing, problem, story, progress, question, reveal, finished });
}

if (!code || !token) {
  $("#phase").textContent = "This page needs the dashboard link the server printed (it ends in #room=…&token=…).";
} else {
  $("#join-code").textContent = code;
  $("#connection-retry").addEventListener("click", () => services.connection.retry());
  $("#audio-unlock").addEventListener("click", () => { $("#audio-unlock").hidden = true; services.player.unlock(); });
  services.connection.start();
}
