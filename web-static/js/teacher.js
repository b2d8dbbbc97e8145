// The teacher's page: `/teacher#room=CODE&token=TEACHER-TOKEN`.

import { $, announce } from "./dom.js";
import { RoomConnection, fragmentParameters } from "./connection.js";
import { RoomStore } from "./room-store.js";
import { LINK_REFUSALS } from "./error-codes.js";
import { TeacherControls } from "./controls.js";
import { describePhase } from "./phase.js";
import { storageBanner } from "./storage-banner.js";

const params = fragmentParameters();
const code = params.get("room");
const token = params.get("token");
const store = new RoomStore();
const connection = new RoomConnection({
  hello: () => ({ type: "control", room: code, token }),
  room: () => code,
  onMessage: handle,
  onStatus: ({ state }) => {
    const banner = $("#connection-message");
    banner.hidden = state === "open" || state === "connecting";
    $("#connection-text").textContent = state === "closed"
      ? "This teacher link is not valid (or the room is gone). Check the link the server printed."
      : "We lost the connection to the server. Reconnecting…";
  },
});
const controls = new TeacherControls($("#controls"), (message) => connection.send(message), { room: code, token });
window.storycircle = { events: [], connection };
Object.defineProperty(window.storycircle, "room", { get: () => store.state });

function handle(message) {
  if (message.type === "error") {
    if (LINK_REFUSALS.has(message.code)) {
      $("#room-state").textContent = message.message;
    } else {
      controls.refused(message);
    }
    return;
  }
  if (!store.apply(message)) return;
  render();
}

function render() {
  const room = store.state;
  $("#room-title").textContent = `${room.title ?? "Room"} · ${room.code ?? code}`;
  const stateText = describePhase(room);
  if ($("#room-state").textContent !== stateText) announce(stateText);
  $("#room-state").textContent = stateText;
  // Counts only while a question is open: never a stale "2 of 3 answered" on a finished room.
  $("#room-answers").textContent = room.phase === "question" && room.answers
    ? `${room.answers.answered} of ${room.answers.total} ${room.answers.total === 1 ? "child" : "children"} answered` : "";
  const join = `${location.origin}/?room=${room.code ?? code}`;
  $("#join-link").textContent = join;
  $("#join-link").href = join;
  storageBanner($("#storage-banner"), room.storage);
  // How the story is being read, when the teacher should know (the natural voice failed): the server's
  // sentence, with its code for the page's words.
  const notice = room.phase === "narrating" || room.phase === "narrated" ? room.plan?.notice : null;
  $("#voice-notice").hidden = !notice;
  $("#voice-notice").textContent = notice?.message ?? "";
  if (notice) $("#voice-notice").dataset.code = notice.code;
  controls.update(room);
}

if (!code || !token) {
  $("#room-state").textContent = "This page needs the teacher link the server printed (it ends in #room=…&token=…).";
} else {
  $("#connection-retry").addEventListener("click", () => connection.retry());
  connection.start();
}
