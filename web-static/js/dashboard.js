// The dashboard, for the projector: `/dashboard#room=CODE&token=DASHBOARD-TOKEN`. With the teacher token
// it also shows the controls. One screen that is never scrolled: every phase fits 1920×1080 and 1280×720.

import { $, el, clear, showOnly, progressDots, board, podium, announce, fitList } from "./dom.js";
import { RoomConnection, fragmentParameters } from "./connection.js";
import { NarrationPlayer } from "./narration.js";
import { ScreenState } from "./screen-state.js";
import { TeacherControls } from "./controls.js";
import { describePhase } from "./phase.js";
import { OPTION_SHAPES, SHAPE_NAMES, renderOptions, namesColours, barColour } from "./options.js";
import { SoundBoard } from "./sound.js";
import { storageBanner } from "./storage-banner.js";

const SECTIONS = ["lobby", "preparing", "problem", "story", "quiz", "finished"];
const params = fragmentParameters();
const code = params.get("room");
const token = params.get("token");
const room = new ScreenState();
let controls = null;
let countdownFrame = null;
let openTimer = null;
let lastTick = null;
// Who is already on screen: only children who arrive later pop in (and go "pop").
let shownPlayers = null;

const connection = new RoomConnection({
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
const player = new NarrationPlayer({
  container: $("#story-text"),
  clock: { now: () => connection.clock.now(), at: (at, fn) => connection.clock.at(at, fn) },
  onAudioBlocked: () => { $("#audio-unlock").hidden = false; },
});
// The projector plays sound unless the teacher mutes it (remembered on this computer).
const sounds = new SoundBoard({ key: "storycircle.sound.projector", defaultOn: true, button: $("#sound-toggle") });
window.storycircle = { ...(window.storycircle ?? {}), events: [], connection, room };

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
    case "lobby": renderLobby(); break;
    case "preparing":
      show("preparing");
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

/** A welcome replaces everything: the screen is rebuilt from the snapshot. */
function welcome(message) {
  const snapshot = message.room;
  $("#title").textContent = snapshot.title;
  $("#join-code").textContent = snapshot.code;
  $("#join-url").textContent = `${location.host}`;
  $("#lobby-story").textContent = `${snapshot.title} · ${snapshot.questionCount} ${snapshot.questionCount === 1 ? "question" : "questions"}`;
  if (message.role === "teacher" && !controls) {
    $("#controls").hidden = false;
    $("#side").classList.add("has-controls");
    controls = new TeacherControls($("#controls"), (command) => connection.send(command), { room: code, token });
  }
  loadQRCode(snapshot.code);
  player.stop();
  clearTimeout(openTimer);
  cancelAnimationFrame(countdownFrame);
  shownPlayers = null;
  switch (snapshot.phase) {
    case "lobby": renderLobby(); break;
    case "preparing": show("preparing"); break;
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

/** Shows one phase's section; after the lobby the code and the QR code shrink into the corner. */
function show(section) {
  showOnly(SECTIONS, section);
  setBodyClass();
  if (room.phase === "lobby") sounds.startLoop();
  else sounds.endLoop();
}

let qrLoaded = null;
/** The QR code comes from the server (it knows the address children use), fetched with our token. */
async function loadQRCode(roomCode) {
  if (qrLoaded === roomCode) return;
  qrLoaded = roomCode;
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

function renderLobby() {
  if (room.phase !== "lobby") return;
  show("lobby");
  $("#lobby-count").textContent = String(room.players.length);
  const list = clear($("#lobby-list"));
  const arriving = [];
  for (const p of room.players) {
    const isNew = shownPlayers !== null && !shownPlayers.has(p.id);
    list.append(el("li", { class: `${p.connected ? "" : "away"}${isNew ? " pop" : ""}`, text: p.nickname }));
    if (isNew) arriving.push(p.nickname);
  }
  shownPlayers = new Set(room.players.map((p) => p.id));
  fitList(list, (n) => el("li", { class: "more", text: `+ ${n} more` }));
  if (arriving.length > 0) {
    sounds.play("pop");
    announce(`${arriving.join(", ")} joined.`);
  }
}

function story(plan) {
  show("story");
  player.load(plan);
  announce("The story is starting.");
}

function problem(text) {
  player.stop();
  show("problem");
  $("#problem-text").textContent = text;
}

function question(view) {
  clearTimeout(openTimer);
  show("quiz");
  $("#question-number").textContent = `Question ${view.index + 1} of ${view.count}`;
  $("#question-text").textContent = view.text;
  $("#distribution").hidden = true;
  $("#explanation").hidden = true;
  const options = $("#options");
  options.hidden = false;
  renderOptions(options, view.options, null);
  lastTick = null;
  const open = () => { record(`question:${view.index}:shown`); countdown(); };
  const wait = connection.clock.until(view.opensAt);
  if (wait > 0) {
    $("#countdown-text").textContent = "Get ready…";
    openTimer = setTimeout(open, wait);
  } else {
    open();
  }
}

function countdown() {
  cancelAnimationFrame(countdownFrame);
  const view = room.question;
  if (!view || !view.deadline) {
    $("#countdown-text").textContent = "No timer";
    $("#countdown-fill").style.transform = "scaleX(1)";
    return;
  }
  const tick = () => {
    if (room.phase !== "question" || room.paused) return;
    const remaining = Math.max(0, view.deadline - connection.clock.now());
    const seconds = Math.ceil(remaining / 1000);
    $("#countdown-fill").style.transform = `scaleX(${view.timeLimitMs ? remaining / view.timeLimitMs : 0})`;
    $("#countdown-text").textContent = remaining > 0 ? `${seconds} s` : "Time’s up!";
    // The last five seconds tick, once a second.
    if (remaining > 0 && seconds <= 5 && seconds !== lastTick) {
      lastTick = seconds;
      sounds.play("tick");
    }
    if (remaining > 0) countdownFrame = requestAnimationFrame(tick);
  };
  tick();
}

function reveal(message) {
  clearTimeout(openTimer);
  cancelAnimationFrame(countdownFrame);
  show("quiz");
  $("#countdown-text").textContent = "Answer";
  $("#countdown-fill").style.transform = "scaleX(0)";
  const view = room.question;
  const texts = view ? view.options : message.distribution.map((_, i) => `Option ${i + 1}`);
  const neutral = namesColours(texts);
  const total = message.distribution.reduce((a, b) => a + b, 0);
  const rows = clear($("#distribution"));
  rows.classList.toggle("many", message.distribution.length > 4);
  message.distribution.forEach((count, index) => {
    const correct = index === message.correctOption;
    const fill = el("div", { class: "fill" });
    fill.style.width = `${total ? (100 * count) / total : 0}%`;
    fill.style.setProperty("--bar-color", barColour(index, texts[index], neutral));
    rows.append(el("li", { class: correct ? "correct" : "", "data-index": index },
      el("span", { class: "shape", "aria-hidden": "true", text: OPTION_SHAPES[index % 8] }),
      el("span", { class: "text" },
        el("span", { class: "visually-hidden", text: `${SHAPE_NAMES[index % 8]}: ` }),
        texts[index] ?? "",
        correct ? el("span", { class: "right", text: "✓ Right answer" }) : null),
      el("div", { class: "track", "aria-hidden": "true" }, fill),
      el("span", { class: "count" }, `${count}`, el("span", { class: "visually-hidden", text: count === 1 ? " child" : " children" }))));
  });
  $("#options").hidden = true;
  rows.hidden = false;
  const explanation = $("#explanation");
  explanation.hidden = !message.explanation;
  explanation.textContent = message.explanation ?? "";
  sounds.play("chime");
  record(`reveal:${message.question}`);
  announce(`The answer is ${texts[message.correctOption] ?? ""}.`);
}

function finished(message) {
  player.stop();
  clearTimeout(openTimer);
  cancelAnimationFrame(countdownFrame);
  show("finished");
  clear($("#podium")).append(podium(message.podium, {
    more: message.podiumMore,
    onPlace: (rank) => {
      record(`podium:${rank}`);
      if (rank === 1) sounds.play("fanfare");
    },
  }));
  announce("The quiz is over!");
}

/** The phase decides the layout; before the quiz there are no points, so the side column makes way. */
function setBodyClass() {
  const beforeQuiz = ["lobby", "preparing", "error", "narrating"].includes(room.phase);
  document.body.className = `dashboard phase-${room.phase}${beforeQuiz && !controls ? " no-side" : ""}`;
}

function renderSide() {
  $("#phase").textContent = describePhase(room);
  storageBanner($("#storage-banner"), room.storage);
  setBodyClass();
  $("#answered").textContent = room.phase === "question" && room.answers ? `${room.answers.answered} of ${room.answers.total} answered` : "";
  const gridSection = $("#grid-section");
  const showGrid = Boolean(room.settings.answerGrid) && room.scoreboard.length > 0 && ["question", "reveal", "finished"].includes(room.phase);
  if (room.phase !== "lobby") {
    // Only children with points, and only the top: a projector never lists a row of zeros.
    const scored = room.scoreboard.filter((entry) => entry.score > 0);
    const top = scored.slice(0, showGrid ? 5 : 10);
    const boardNode = top.length > 0 ? board(top) : el("p", { class: "muted", text: "Points appear here after each answer." });
    clear($("#board")).append(boardNode);
    if (top.length > 0) fitList(boardNode, (n) => el("li", { class: "more", text: `and ${n} more with points` }), scored.length - top.length);
  }
  gridSection.hidden = !showGrid;
  if (showGrid) {
    const grid = clear($("#grid"));
    for (const entry of room.scoreboard) {
      grid.append(el("li", {}, el("span", { class: "name", text: entry.nickname }),
        progressDots(entry.results ?? [], room.questionCount, `${entry.nickname}’s answers`)));
    }
    fitList(grid, (n) => el("li", { class: "more", text: `and ${n} more` }));
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
