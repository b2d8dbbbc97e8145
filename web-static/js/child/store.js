// The child's page keeps one state, here; each screen (join, lobby, story, question, reveal, podium) reads
// and changes it, and the shared services (the connection, the narration player, the sounds) live beside it.

import { $, showOnly, ordinal, points } from "../dom.js";

export const SCREENS = ["join", "lobby", "preparing", "problem", "story", "quiz", "finished"];
const SESSION_KEY = "storycircle.session";
const BLOCKED_KEY = "storycircle.blocked";

export const state = {
  room: null,
  nickname: null,
  token: null,
  playerId: null,
  welcomed: false,
  /** A hello went out on this connection and no welcome has come back yet. */
  helloPending: false,
  title: "",
  questionCount: 0,
  results: [],
  standing: null,
  question: null,
  /** The option this child picked on the open question (saved or still being sent). */
  chosen: null,
  /** An answer tapped but not yet acknowledged: {question, option}. Sent again after a reconnect. */
  pending: null,
  revealed: false,
  paused: false,
  /** This join is a blocked token asking again (see join.js). */
  tryingBlockedToken: false,
};

/** The connection, the narration player and the sounds, set once by child.js. */
export const services = { connection: null, player: null, sounds: null };

export function show(screen) {
  showOnly(SCREENS, screen);
}

// Tests and curious teachers can read when things happened on this screen, in server time.
window.storycircle = { ...(window.storycircle ?? {}), events: [], state };
export function record(event) {
  const clock = services.connection?.clock;
  window.storycircle.events.push({ event, at: clock ? Math.round(clock.now()) : Date.now() });
}

// ---- The session: the resume token survives a refresh or a dropped Wi-Fi ----

export function saveSession() {
  const session = { room: state.room, token: state.token, nickname: state.nickname, playerId: state.playerId, pending: state.pending };
  try { localStorage.setItem(SESSION_KEY, JSON.stringify(session)); } catch { /* private mode */ }
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
  state.token = null;
  state.pending = null;
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

/** "3rd place, 120 points behind Ana"; nothing at all while a child has no points. */
export function placeText(standing) {
  if (!standing || standing.score <= 0) return "";
  if (!standing.ahead) return standing.rank === 1 ? "🏆 1st place!" : `${ordinal(standing.rank)} place`;
  return `${ordinal(standing.rank)} place, ${points(standing.ahead.points)} behind ${standing.ahead.nickname}`;
}

export function scoreText(standing) {
  if (!standing) return "";
  return standing.score > 0 ? `⭐ ${points(standing.score)}` : "";
}

export function setStanding(standing) {
  if (!standing) return;
  state.standing = standing;
  state.results = standing.results ?? state.results;
  $("#quiz-score").textContent = scoreText(standing);
  $("#story-score").textContent = scoreText(standing);
}
