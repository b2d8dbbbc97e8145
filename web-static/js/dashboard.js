// The dashboard, for the projector: `/dashboard#room=CODE&token=DASHBOARD-TOKEN`. With the teacher token
// it also shows the controls.

import { $, el, clear, showOnly, optionButton, optionColour, progressDots, board, podium, announce, OPTION_SHAPES } from "./dom.js";
import { RoomConnection, fragmentParameters } from "./connection.js";
import { NarrationPlayer } from "./narration.js";
import { ScreenState } from "./screen-state.js";
import { TeacherControls } from "./controls.js";
import { describePhase } from "./phase.js";

const SECTIONS = ["lobby", "preparing", "problem", "story", "quiz", "finished"];
const params = fragmentParameters();
const code = params.get("room");
const token = params.get("token");
const room = new ScreenState();
let controls = null;
let countdownFrame = null;
window.storycircle = { events: [] };

const connection = new RoomConnection({
  hello: () => ({ type: "watch", room: code, token }),
  onMessage: handle,
  onStatus: ({ state }) => {
    $("#connection-message").hidden = state === "open" || state === "connecting";
    $("#connection-text").textContent = state === "closed"
      ? "This dashboard link is not valid (or the room is gone). Check the link the server printed."
      : "We lost the connection to the server. Reconnecting…";
  },
});
const player = new NarrationPlayer({
  container: $("#story-text"),
  clock: { now: () => connection.clock.now(), at: (at, fn) => connection.clock.at(at, fn) },
  onAudioBlocked: () => { $("#audio-unlock").hidden = false; },
});

function record(event) {
  window.storycircle.events.push({ event, at: Math.round(connection.clock.now()) });
}

function handle(message) {
  if (message.type === "error") {
    if (controls && !["bad_token", "room_not_found"].includes(message.code)) controls.refused(message);
    else $("#phase").textContent = message.message;
    return;
  }
  room.apply(message);
  switch (message.type) {
    case "welcome": welcome(message); break;
    case "preparing":
      showOnly(SECTIONS, "preparing");
      $("#preparing-fill").style.width = `${message.total ? (100 * message.ready) / message.total : 0}%`;
      break;
    case "narration.plan": story(message); break;
    case "progress": if (!room.paused) player.schedule(message.sentence, message.at); break;
    case "narration.complete": player.finish(); break;
    case "narration.error": problem(message.message); break;
    case "question": question(message); break;
    case "reveal": reveal(message); break;
    case "paused": player.stop(); cancelAnimationFrame(countdownFrame); break;
    case "resumed":
      if (room.question && message.deadline) {
        room.question = { ...room.question, deadline: message.deadline };
        countdown();
      }
      break;
    case "finished": finished(message); break;
  }
  renderSide();
}

function welcome(message) {
  const snapshot = message.room;
  $("#title").textContent = snapshot.title;
  $("#join-code").textContent = snapshot.code;
  $("#join-url").textContent = `${location.host}`;
  if (message.role === "teacher" && !controls) {
    $("#controls").hidden = false;
    controls = new TeacherControls($("#controls"), (command) => connection.send(command));
  }
  loadQRCode(snapshot.code);
  switch (snapshot.phase) {
    case "lobby": showOnly(SECTIONS, "lobby"); break;
    case "preparing": showOnly(SECTIONS, "preparing"); break;
    case "error": problem(snapshot.error); break;
    case "narrating":
      story(snapshot.plan);
      if (!snapshot.paused) player.schedule(snapshot.sentence, snapshot.sentenceAt);
      break;
    case "question": question(snapshot.question); break;
    case "reveal": question(snapshot.question); reveal(snapshot.reveal); break;
    case "finished": finished(snapshot.finished); break;
  }
}

/** The QR code comes from the server (it knows the address children use), fetched with our token. */
async function loadQRCode(roomCode) {
  try {
    const response = await fetch(`/api/rooms/${encodeURIComponent(roomCode)}/qr.svg`, { headers: { Authorization: `Bearer ${token}` } });
    if (!response.ok) return;
    const image = $("#qr");
    image.src = URL.createObjectURL(await response.blob());
    image.hidden = false;
  } catch {
    // The code on screen is enough to join.
  }
}

function story(plan) {
  showOnly(SECTIONS, "story");
  player.load(plan);
  announce("The story is starting.");
}

function problem(text) {
  player.stop();
  showOnly(SECTIONS, "problem");
  $("#problem-text").textContent = text;
}

function question(view) {
  showOnly(SECTIONS, "quiz");
  $("#question-number").textContent = `Question ${view.index + 1} of ${view.count}`;
  $("#question-text").textContent = view.text;
  $("#distribution").hidden = true;
  $("#explanation").hidden = true;
  const options = clear($("#options"));
  options.classList.remove("locked");
  view.options.forEach((text, index) => {
    const button = optionButton(index, text);
    button.disabled = true;
    options.append(button);
  });
  const show = () => { record(`question:${view.index}:shown`); countdown(); };
  const wait = connection.clock.until(view.opensAt);
  if (wait > 0) setTimeout(show, wait); else show();
}

function countdown() {
  cancelAnimationFrame(countdownFrame);
  const view = room.question;
  if (!view || !view.deadline) {
    $("#countdown-text").textContent = "";
    return;
  }
  const tick = () => {
    if (room.phase !== "question" || room.paused) return;
    const remaining = Math.max(0, view.deadline - connection.clock.now());
    $("#countdown-fill").style.transform = `scaleX(${view.timeLimitMs ? remaining / view.timeLimitMs : 0})`;
    $("#countdown-text").textContent = remaining > 0 ? `${Math.ceil(remaining / 1000)} s` : "Time’s up!";
    if (remaining > 0) countdownFrame = requestAnimationFrame(tick);
  };
  tick();
}

function reveal(message) {
  cancelAnimationFrame(countdownFrame);
  $("#countdown-text").textContent = "";
  $("#countdown-fill").style.transform = "scaleX(0)";
  $("#options").classList.add("locked");
  const correct = $(`#options .option[data-index="${message.correctOption}"]`);
  if (correct) {
    correct.classList.add("correct");
    correct.querySelector(".mark").textContent = "✓";
  }
  const total = message.distribution.reduce((a, b) => a + b, 0);
  const bars = clear($("#distribution"));
  message.distribution.forEach((count, index) => {
    const fill = optionColour(el("div", { class: "fill" }), index);
    fill.style.width = `${total ? (100 * count) / total : 0}%`;
    bars.append(el("div", { class: `bar${index === message.correctOption ? " correct" : ""}`, "aria-label": `Option ${index + 1}: ${count} children` },
      el("span", { "aria-hidden": "true", text: OPTION_SHAPES[index % 8] }),
      el("div", { class: "track" }, fill),
      el("strong", { text: String(count) })));
  });
  bars.hidden = false;
  const explanation = $("#explanation");
  explanation.hidden = !message.explanation;
  explanation.textContent = message.explanation ?? "";
  record(`reveal:${message.question}`);
  announce(`The answer is ${correct ? correct.querySelector(".label").textContent : ""}.`);
}

function finished(message) {
  player.stop();
  showOnly(SECTIONS, "finished");
  clear($("#podium")).append(podium(message.podium));
  announce("The quiz is over!");
}

function renderSide() {
  $("#phase").textContent = describePhase(room);
  $("#lobby-count").textContent = String(room.players.length);
  const list = clear($("#lobby-list"));
  for (const p of room.players) list.append(el("li", { class: p.connected ? "" : "away", text: p.nickname }));
  clear($("#board")).append(board(room.scoreboard.slice(0, 10)));
  if (room.answers && room.phase === "question") {
    $("#answered").textContent = `${room.answers.answered} of ${room.answers.total} answered`;
  } else if (room.phase !== "question") {
    $("#answered").textContent = "";
  }
  const gridSection = $("#grid-section");
  const showGrid = room.scoreboard.length > 0 && ["question", "reveal", "finished"].includes(room.phase);
  gridSection.hidden = !showGrid;
  if (showGrid) {
    const grid = clear($("#grid"));
    for (const entry of room.scoreboard) {
      grid.append(el("tr", {}, el("td", { text: entry.nickname }), el("td", {}, progressDots(entry.results ?? [], room.questionCount))));
    }
  }
  if (controls) controls.update(room);
}

if (!code || !token) {
  $("#phase").textContent = "This page needs the dashboard link the server printed (it ends in #room=…&token=…).";
} else {
  $("#join-code").textContent = code;
  $("#connection-retry").addEventListener("click", () => connection.retry());
  $("#audio-unlock").addEventListener("click", () => { $("#audio-unlock").hidden = true; player.unlock(); });
  connection.start();
}
