// The end: it leads with what the child did well ("You got 2 of 3 right!"), then the place (never "0
// points"), then the podium, which has nobody on it with 0 points.

import { $, clear, announce, podium, progressDots, streakText } from "../dom.js";
import { room, session, services, show, record, placeText, results as resultsSoFar } from "./store.js";

export function lead(results) {
  const counted = results.filter((r) => r !== "skipped");
  const right = counted.filter((r) => r === "correct").length;
  if (counted.length === 0) return ["Thanks for listening!", "You heard the whole story with your class."];
  if (right === counted.length) return [`You got all ${counted.length} right! 🌟`, "Every single one. Brilliant listening!"];
  if (right > 0) return [`You got ${right} of ${counted.length} right!`, right * 2 >= counted.length ? "Great listening!" : "Well done for having a go at every question."];
  return ["Thanks for playing!", "You listened to the whole story and had a go. Next time, those answers are yours!"];
}

export function finished(result) {
  services.player.stop();
  show("finished");
  const you = result.you;
  const results = you?.results ?? resultsSoFar();
  const [headline, praise] = lead(results);
  $("#finished-title").textContent = headline;
  const streak = streakText(you?.streak ?? 0);
  $("#finished-praise").textContent = [praise, streak].filter(Boolean).join(" ");
  clear($("#finished-dots")).append(progressDots(results, room.state.questionCount || results.length));
  $("#finished-place").textContent = placeText(you);
  clear($("#finished-podium")).append(podium(result.podium, {
    more: result.podiumMore,
    you: { id: session.playerId, standing: you },
    onPlace: (rank) => {
      record(`podium:${rank}`);
      if (rank === 1) services.sounds.play("fanfare");
    },
  }));
  record("finished");
  announce(`The quiz is over. ${headline} ${placeText(you)}`);
}
