// The child's page: the room as the server says it is (`room`, the store every page uses), what only this
// browser knows (`session`: how it gets in, the tap still being sent), and the shared services (the
// connection, the narration player, the sounds). Screens read the room and render; child.js feeds it.

import { $, showOnly, ordinal, points } from "../dom.js";
import { t, isolate } from "../i18n.js";
import { RoomStore } from "../room-store.js";
import { STAGE, nextStage, isIn } from "./join-stage.js";

export const SCREENS = ["join", "lobby", "preparing", "problem", "story", "quiz", "finished"];
const SESSION_KEY = "storycircle.session";
const BLOCKED_KEY = "storycircle.blocked";

/** The room as the server says it is (the store every page uses, fed by child.js). */
export const room = new RoomStore();

/** What only this browser knows: how it gets in, and the tap it is still sending. */
export const session = {
  room: null,
  nickname: null,
  token: null,
  playerId: null,
  /** Where this page is in getting in (child/join-stage.js); set by `advance` only. */
  stage: STAGE.FORM,
  /** The option this child picked on the open question (saved or still being sent). */
  chosen: null,
  /** An answer tapped but not yet acknowledged: {question, option}. Sent again after a reconnect. */
  pending: null,
  /** The class child whose name this page tapped, until the welcome. */
  member: null,
  /** The class child this page is (a class room), kept with the token: a removal sends it back to the names. */
  classMember: null,
  /** "That's not me" was refused (this child has answered): the button is not offered again here. */
  notMeClosed: false,
};
// Tests and the curious read whether the page is in as before.
Object.defineProperty(session, "welcomed", { get: () => isIn(session.stage), enumerable: true });

/** The join stage after `event` (child/join-stage.js): the only place the stage changes. */
export function advance(event) {
  session.stage = nextStage(session.stage, event);
}

/** Whether the open question takes answers now: not revealed, not paused. */
export function answering() {
  return room.state.phase === "question" && !room.state.paused;
}

/** The connection, the narration player and the sounds, set once by child.js. */
export const services = { connection: null, player: null, sounds: null, banner: () => {} };

export function show(screen) {
  showOnly(SCREENS, screen);
}

// Tests and curious teachers can read when things happened on this screen, in server time.
window.storycircle = { ...(window.storycircle ?? {}), events: [], session };
Object.defineProperty(window.storycircle, "room", { get: () => room.state, configurable: true });
export function record(event) {
  const clock = services.connection?.clock;
  window.storycircle.events.push({ event, at: clock ? Math.round(clock.now()) : Date.now() });
}

// ---- The session: the resume token survives a refresh or a dropped Wi-Fi ----

export function saveSession() {
  const saved = { room: session.room, token: session.token, nickname: session.nickname, playerId: session.playerId, pending: session.pending, classMember: session.classMember };
  try { localStorage.setItem(SESSION_KEY, JSON.stringify(saved)); } catch { /* private mode */ }
}

export function loadSession() {
  try {
    return JSON.parse(localStorage.getItem(SESSION_KEY) ?? "null");
  } catch {
    return null;
  }
}

export function forgetSession() {
  try { localStorage.removeItem(SESSION_KEY); } catch { /* private mode */ }
  session.token = null;
  session.pending = null;
  session.classMember = null;
}

// ---- Blocked: the token of a room this browser was blocked from, kept to show that again ----

export function blockedToken(room) {
  try {
    return JSON.parse(localStorage.getItem(BLOCKED_KEY) ?? "{}")[room] ?? null;
  } catch {
    return null;
  }
}

export function rememberBlocked(room, token) {
  try {
    const blocked = JSON.parse(localStorage.getItem(BLOCKED_KEY) ?? "{}");
    blocked[room] = token;
    localStorage.setItem(BLOCKED_KEY, JSON.stringify(blocked));
  } catch { /* private mode */ }
}

export function forgetBlocked(room) {
  try {
    const blocked = JSON.parse(localStorage.getItem(BLOCKED_KEY) ?? "{}");
    delete blocked[room];
    localStorage.setItem(BLOCKED_KEY, JSON.stringify(blocked));
  } catch { /* private mode */ }
}

// ---- Standing: kind words about where a child is ----

/** Whether the teacher chose a contest: only then do phones show places and classmates' scores. */
export function competitive() {
  return Boolean(room.state.settings?.competitive);
}

/**
 * "3rd place, 120 points behind Ana", in a competitive room only (the server sends no place otherwise);
 * nothing at all while a child has no points.
 */
export function placeText(standing) {
  if (!standing || standing.score <= 0 || standing.rank === null || standing.rank === undefined) return "";
  if (!standing.ahead) return standing.rank === 1 ? t("place.first") : t("place.rank", { place: ordinal(standing.rank) });
  return t("place.behind", { place: ordinal(standing.rank), points: points(standing.ahead.points), name: isolate(standing.ahead.nickname) });
}

export function scoreText(standing) {
  if (!standing) return "";
  return standing.score > 0 ? t("points.score", { points: points(standing.score) }) : "";
}

/** The child's score where it shows, from the room's standing for them. */
export function renderScore() {
  const standing = room.state.you;
  $("#quiz-score").textContent = scoreText(standing);
  $("#story-score").textContent = scoreText(standing);
}

/** The child's results so far, one per question concluded. */
export function results() {
  return room.state.you?.results ?? [];
}
