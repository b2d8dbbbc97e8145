// The story: preparing, the narration sentence by sentence (the spoken word highlighted), a failure in
// kind words, and "the quiz is about to start".

import { $, announce } from "../dom.js";
import { room, services, show, record } from "./store.js";

export function preparing({ ready, total }) {
  show("preparing");
  const percent = total > 0 ? Math.round((ready / total) * 100) : 0;
  $("#preparing-bar .progress-fill").style.width = `${percent}%`;
  $("#preparing-bar").setAttribute("aria-valuenow", String(percent));
  if (ready === 0) announce("Pip is preparing your story.");
}

export function narrationPlan(plan) {
  show("story");
  $("#quiz-soon").hidden = true;
  services.player.load(plan);
  record("narration.plan");
  announce("The story is starting. Listen and read along!");
}

export function progress(message) {
  if (!room.state.paused) services.player.schedule(message.sentence, message.at);
}

export function narrationComplete() {
  services.player.finish();
  record("narration.complete");
}

/** The narration could not be prepared. The server sends children a kind sentence, never the reason. */
export function problem(text) {
  services.player.stop();
  show("problem");
  $("#problem-text").textContent = text;
  announce(text);
}

export function quizSoon() {
  const box = $("#quiz-soon");
  box.hidden = false;
  box.textContent = "The story is over. The quiz is about to start!";
  box.scrollIntoView({ block: "center" });
  announce("The story is over. Get ready for the quiz!");
}
