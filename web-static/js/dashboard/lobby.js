// The projector's lobby: the code and the QR code to join, and everyone who has joined (newcomers pop in,
// with a "pop", and are announced).

import { $, el, clear, announce, fitList, written } from "../dom.js";
import { t, tParts, number, list as listOf, isolate } from "../i18n.js";
import { ApiClient } from "../api.js";
import { room, services, show } from "./store.js";

// Who is already on screen: only children who arrive later pop in (and go "pop").
let shownPlayers = null;

/** Forgets who was on screen: after a welcome nobody is new. */
export function resetLobby() {
  shownPlayers = null;
}

/** `quiet`: only the words again (the language changed): nobody pops in, nothing is announced. */
export function renderLobby({ quiet = false } = {}) {
  const state = room.state;
  if (state.phase !== "lobby") return;
  show("lobby");
  const count = el("span", { id: "lobby-count", class: "num", "data-count": state.players.length, text: number(state.players.length) });
  $("#lobby-title").replaceChildren(...tParts("dash.joined", { count }));
  const list = clear($("#lobby-list"));
  const arriving = [];
  for (const p of state.players) {
    const isNew = !quiet && shownPlayers !== null && !shownPlayers.has(p.id);
    list.append(el("li", { class: `${p.connected ? "" : "away"}${isNew ? " pop" : ""}` },
      written(p.nickname), p.connected ? null : el("span", { class: "away-mark", text: ` ${t("dash.away")}` })));
    if (isNew) arriving.push(p.nickname);
  }
  shownPlayers = new Set(state.players.map((p) => p.id));
  fitList(list, (n) => el("li", { class: "more", text: t("dash.plus_more", { count: n }) }));
  if (arriving.length > 0) {
    services.sounds.play("pop");
    announce(t("dash.arrived", { names: listOf(arriving.map(isolate)) }));
  }
}

let qrLoaded = null;
/**
 * The QR code comes from the server (it knows the address children use), fetched with our token. Its
 * link carries the room's language, so it is fetched again when the teacher changes that.
 */
export async function loadQRCode(roomCode, language) {
  const key = `${roomCode} ${language}`;
  if (qrLoaded === key) return;
  qrLoaded = key;
  try {
    const { blob } = await new ApiClient(services.token).file(`/api/rooms/${encodeURIComponent(roomCode)}/qr.svg`, "qr.svg");
    const image = $("#qr");
    image.src = URL.createObjectURL(blob);
    image.hidden = false;
  } catch {
    // The code on screen is enough to join.
  }
}
