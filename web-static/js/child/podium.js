// The end: it leads with what the child did well ("You got 2 of 3 right!"), then their points (never
// "0 points"); only when the teacher chose a contest, the place and the podium (nobody on it with 0 points).

import { $, clear, announce, podium, progressDots, streakText } from "../dom.js";
import { room, session, services, show, record, placeText, scoreText, competitive, results as resultsSoFar } from "./store.js";
import { t } from "../i18n.js";

export function lead(results) {
  const counted = results.filter((r) => r !== "skipped");
  const right = counted.filter((r) => r === "correct").length;
  if (counted.length === 0) return [t("finished.listening"), t("finished.listening_more")];
  if (right === counted.length) return [t("finished.all", { count: counted.length }), t("finished.all_more")];
  if (right > 0) return [t("finished.some", { right, count: counted.length }), right * 2 >= counted.length ? t("finished.great") : t("finished.had_a_go")];
  // "Had a go" is true only of a child who answered something; one who never did listened, and is told so.
  if (!counted.some((r) => r === "wrong")) return [t("finished.listening"), t("finished.listening_try")];
  return [t("finished.playing"), t("finished.playing_more")];
}

/** `quiet`: only the words again (the language changed): no fanfare, nothing recorded. */
export function finished(result, { quiet = false } = {}) {
  services.player.stop();
  show("finished");
  const you = result.you;
  const results = you?.results ?? resultsSoFar();
  const [headline, praise] = lead(results);
  $("#finished-title").textContent = headline;
  const streak = streakText(you?.streak ?? 0);
  $("#finished-praise").textContent = [praise, streak].filter(Boolean).join(" ");
  clear($("#finished-dots")).append(progressDots(results, room.state.questionCount || results.length));
  const contest = competitive() || (result.podium ?? []).length > 0;
  const place = contest ? placeText(you) : scoreText(you);
  $("#finished-place").textContent = place;
  $("#finished-podium").hidden = !contest;
  $("#finished-podium").previousElementSibling.hidden = !contest;
  clear($("#finished-podium"));
  if (contest) $("#finished-podium").append(podium(result.podium, {
    more: result.podiumMore,
    you: { id: session.playerId, standing: you },
    onPlace: (rank) => {
      if (quiet) return;
      record(`podium:${rank}`);
      if (rank === 1) services.sounds.play("fanfare");
    },
  }));
  if (quiet) return;
  record("finished");
  announce(t("finished.announce", { headline, place }));
}
