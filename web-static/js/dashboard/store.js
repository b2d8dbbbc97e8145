// The projector's page: the room as the server says it is (`room`, the store every page uses) and the
// shared services (the connection, the narration player, the sounds, the teacher's controls when the
// link has the teacher token). dashboard.js feeds the store; the screens here render from it.

import { showOnly } from "../dom.js";
import { RoomStore } from "../room-store.js";

const SECTIONS = ["lobby", "preparing", "problem", "story", "quiz", "finished"];

export const room = new RoomStore();

/** Set by dashboard.js; `controls` only once a teacher's welcome has come. */
export const services = { connection: null, player: null, sounds: null, controls: null, token: null };

// Tests and curious teachers can read when things happened on this screen, in server time.
window.storycircle = { ...(window.storycircle ?? {}), events: [] };
Object.defineProperty(window.storycircle, "room", { get: () => room.state, configurable: true });

export function record(event) {
  window.storycircle.events.push({ event, at: Math.round(services.connection.clock.now()) });
}

/** Shows one phase's section; after the lobby the code and the QR code shrink into the corner. */
export function show(section) {
  showOnly(SECTIONS, section);
  setBodyClass();
  if (room.state.phase === "lobby") services.sounds.startLoop();
  else services.sounds.endLoop();
}

/** The phase decides the layout; before the quiz there are no points, so the side column makes way. */
export function setBodyClass() {
  const phase = room.state.phase;
  const beforeQuiz = ["lobby", "preparing", "error", "narrating"].includes(phase);
  document.body.className = `dashboard phase-${phase}${beforeQuiz && !services.controls ? " no-side" : ""}`;
}
