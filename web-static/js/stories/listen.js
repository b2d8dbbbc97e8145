// Listening to one sentence of the story in the editor, read by the server as a room would read it
// (POST /api/stories/listen). One sentence is heard at a time; its button says what is happening: "Loading…"
// while the server reads it, then "Playing…" beside "Stop" until it ends or is stopped, then "Listen" again.
// `window.storycircle.listened` and `.playing` let the tests see what was fetched and what plays.

import { $, announce } from "../dom.js";
import { t } from "../i18n.js";
import { adminApi } from "../api.js";

const listening = { index: null, player: null, ticket: 0 };

function listenButton(index, phase) {
  const row = $(`#edit-sentences li[data-index="${index}"]`);
  if (!row) return;
  const button = row.querySelector("button");
  const status = row.querySelector(".listen-state");
  const number = index + 1;
  row.dataset.listen = phase;
  button.setAttribute("aria-busy", String(phase === "loading"));
  if (phase === "loading") {
    button.textContent = t("library.editor.loading");
    button.setAttribute("aria-label", t("library.editor.loading_sentence", { number }));
    status.textContent = "";
  } else if (phase === "playing") {
    button.textContent = t("library.editor.stop");
    button.setAttribute("aria-label", t("library.editor.stop_sentence", { number }));
    status.textContent = t("library.editor.playing");
  } else {
    button.textContent = t("library.editor.listen");
    button.setAttribute("aria-label", t("library.editor.listen_to", { number }));
    status.textContent = "";
  }
}

/** Stops the sentence playing, if one is, and its button says Listen again. */
export function stopListening() {
  listening.ticket += 1;
  listening.player?.pause();
  listening.player = null;
  if (listening.index !== null) listenButton(listening.index, "idle");
  listening.index = null;
  window.storycircle.playing = null;
}

/** Listens to sentence `index` (`sentence`, read with `narration`'s voice, rate and pitch), or stops it when
 * it is the one playing; `failed(failure)` is told when the server cannot read it. */
export async function listenTo(index, sentence, narration, failed) {
  const again = listening.index === index;
  stopListening();
  if (again) {
    announce(t("library.editor.stopped"));
    return;
  }
  const ticket = listening.ticket;
  listening.index = index;
  listenButton(index, "loading");
  announce(t("library.editor.loading_sentence", { number: index + 1 }));
  try {
    const result = await adminApi().call("POST", "/api/stories/listen", {
      text: sentence, voice: narration.voice, rate: Number(narration.rate), pitch: Number(narration.pitch),
    });
    if (ticket !== listening.ticket) return;
    const player = new Audio(result.audio);
    listening.player = player;
    window.storycircle.listened.push({ sentence, audio: result.audio });
    player.addEventListener("playing", () => {
      if (ticket !== listening.ticket) return;
      window.storycircle.playing = result.audio;
      listenButton(index, "playing");
      announce(t("library.editor.listening"));
    }, { once: true });
    player.addEventListener("ended", () => { if (ticket === listening.ticket) stopListening(); }, { once: true });
    await player.play().catch(() => { if (ticket === listening.ticket) stopListening(); });
  } catch (failure) {
    if (ticket === listening.ticket) stopListening();
    failed(failure);
  }
}
