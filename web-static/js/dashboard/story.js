// The projector's story: preparing, the narration sentence by sentence, and a failure in kind words.

import { $, announce } from "../dom.js";
import { t } from "../i18n.js";
import { room, services, show } from "./store.js";

export function preparing({ ready, total }) {
  // Also when a story starts again from its first sentence (read by another voice): the old one stops.
  services.player?.stop();
  show("preparing");
  $("#preparing-fill").style.width = `${total ? (100 * ready) / total : 0}%`;
}

export function story(plan) {
  show("story");
  services.player.load(plan);
  services.pictures.load(plan);
  announce(t("dash.story_starting"));
}

/** One more sentence of a story that is still being read ahead. */
export function sentence(message) {
  services.player.append(message.sentence);
}

export function progress(message) {
  if (!room.state.paused) services.player.schedule(message.sentence, message.at);
}

/** The narration could not be prepared: kind words for the class; the reason is the teacher's. */
export function problem() {
  services.player.stop();
  show("problem");
  $("#problem-text").textContent = t("narration.failed_child");
}
