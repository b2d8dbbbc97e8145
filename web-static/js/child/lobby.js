// The lobby, like a quiz game's title screen: your own name, today's story, how many questions.

import { $, el, announce, written } from "../dom.js";
import { t, tParts, isolate } from "../i18n.js";
import { session, show } from "./store.js";

export function showLobby(room, { quiet = false } = {}) {
  $("#lobby-title").replaceChildren(...tParts("lobby.hi", { name: written(session.nickname ?? "", "span", { id: "lobby-name" }) }));
  $("#lobby-intro").replaceChildren(...tParts("lobby.story", { title: written(room.title, "strong", { id: "lobby-story" }) }));
  $("#lobby-questions").textContent = t("lobby.questions", { count: room.questionCount });
  $("#lobby-room").replaceChildren(...tParts("lobby.room", { code: el("span", { class: "num", dir: "ltr", text: room.code }) }));
  show("lobby");
  if (!quiet) {
    announce(t("lobby.announce", { name: isolate(session.nickname), title: isolate(room.title), count: room.questionCount }));
  }
}
