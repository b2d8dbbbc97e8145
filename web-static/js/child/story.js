// The story: preparing, the narration sentence by sentence (the spoken word highlighted), a failure in
// kind words, and "the quiz is about to start".

import { $, announce } from "../dom.js";
import { t } from "../i18n.js";
import { room, services, show, record } from "./store.js";

export function preparing({ ready, total }, { quiet = false } = {}) {
  // Also when a story starts again from its first sentence (read by another voice): the old one stops.
  services.player?.stop();
  show("preparing");
  const percent = total > 0 ? Math.round((ready / total) * 100) : 0;
  $("#preparing-bar .progress-fill").style.width = `${percent}%`;
  $("#preparing-bar").setAttribute("aria-valuenow", String(percent));
  if (ready === 0 && !quiet) announce(t("preparing.announce"));
}

export function narrationPlan(plan) {
  show("story");
  $("#quiz-soon").hidden = true;
  services.player.load(plan);
  services.pictures.room = room.state.code ?? services.pictures.room;
  services.pictures.load(plan);
  record("narration.plan");
  announce(t("story.starting"));
}

/** One more sentence of a story that is still being read ahead. */
export function narrationSentence(message) {
  services.player.append(message.sentence);
  record("narration.sentence");
}

export function progress(message) {
  if (!room.state.paused) services.player.schedule(message.sentence, message.at);
}

export function narrationComplete() {
  services.player.finish();
  record("narration.complete");
}

/** The narration could not be prepared. Children are told kindly, never the reason. */
export function problem({ quiet = false } = {}) {
  if (!quiet) services.player.stop();
  show("problem");
  $("#problem-text").textContent = t("narration.failed_child");
  if (!quiet) announce(t("narration.failed_child"));
}

export function quizSoon() {
  const box = $("#quiz-soon");
  box.hidden = false;
  box.textContent = t("story.over");
  box.scrollIntoView({ block: "center" });
  announce(t("story.over_announce"));
}

/** The story's own words stay as written; ours change language. */
export function rewordStory() {
  const box = $("#quiz-soon");
  if (!box.hidden) box.textContent = t("story.over");
}
