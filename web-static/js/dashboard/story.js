// The projector's story: preparing, the narration sentence by sentence, and a failure in kind words.

import { $, announce } from "../dom.js";
import { room, services, show } from "./store.js";

export function preparing({ ready, total }) {
  show("preparing");
  $("#preparing-fill").style.width = `${total ? (100 * ready) / total : 0}%`;
}

export function story(plan) {
  show("story");
  services.player.load(plan);
  announce("The story is starting.");
}

export function progress(message) {
  if (!room.state.paused) services.player.schedule(message.sentence, message.at);
}

export function problem(text) {
  services.player.stop();
  show("problem");
  $("#problem-text").textContent = text;
}
