// The projector's lobby: the code and the QR code to join, and everyone who has joined (newcomers pop in,
// with a "pop", and are announced).

import { $, el, clear, announce, fitList } from "../dom.js";
import { room, services, show } from "./store.js";

// Who is already on screen: only children who arrive later pop in (and go "pop").
let shownPlayers = null;

/** Forgets who was on screen: after a welcome nobody is new. */
export function resetLobby() {
  shownPlayers = null;
}

export function renderLobby() {
  const state = room.state;
  if (state.phase !== "lobby") return;
  show("lobby");
  $("#lobby-count").textContent = String(state.players.length);
  const list = clear($("#lobby-list"));
  const arriving = [];
  for (const p of state.players) {
    const isNew = shownPlayers !== null && !shownPlayers.has(p.id);
    list.append(el("li", { class: `${p.connected ? "" : "away"}${isNew ? " pop" : ""}`, text: p.nickname }));
    if (isNew) arriving.push(p.nickname);
  }
  shownPlayers = new Set(state.players.map((p) => p.id));
  fitList(list, (n) => el("li", { class: "more", text: `+ ${n} more` }));
  if (arriving.length > 0) {
    services.sounds.play("pop");
    announce(`${arriving.join(", ")} joined.`);
  }
}

let qrLoaded = null;
/** The QR code comes from the server (it knows the address children use), fetched with our token. */
export async function loadQRCode(roomCode) {
  if (qrLoaded === roomCode) return;
  qrLoaded = roomCode;
  try {
    const response = await fetch(`/api/rooms/${encodeURIComponent(roomCode)}/qr.svg`, { headers: { Authorization: `Bearer ${services.token}` } });
    if (!response.ok) return;
    const image = $("#qr");
    image.src = URL.createObjectURL(await response.blob());
    image.hidden = false;
  } catch {
    // The code on screen is enough to join.
  }
}
