// The reveal: the child's own answer stays in view beside the result, marked "Your answer"; the right
// answer says so in words; points, the streak ("🔥 3 in a row") and the place ("3rd place, 120 points
// behind Ana"); the explanation and the top of the class below.

import { $, el, clear, announce, board, points, streakText } from "../dom.js";
import { markReveal } from "../options.js";
import { room, session, services, show, record, saveSession, renderScore, placeText } from "./store.js";
import { clearCountdown, renderDots } from "./question.js";

export function showReveal(reveal) {
  clearCountdown();
  if (session.pending) {
    session.pending = null;
    saveSession();
  }
  show("quiz");
  const you = reveal.you;
  const yours = you && you.option !== null && you.option !== undefined ? you.option : null;
  const options = $("#options");
  options.hidden = false;
  $("#get-ready").hidden = true;
  markReveal(options, reveal.correctOption, yours);
  const correctText = room.state.question?.options?.[reveal.correctOption] ?? "";
  const standing = room.state.you;

  let title;
  if (!you || you.outcome === "missed") title = `⏰ Time’s up! The answer was “${correctText}”.`;
  else if (you.outcome === "correct") title = "🎉 Yes! That’s right!";
  else if (you.outcome === "skipped") title = "This question was skipped.";
  else title = `Nice try! The answer was “${correctText}”.`;
  $("#reveal-title").textContent = title;
  const result = $("#reveal-result");
  result.classList.toggle("correct", you?.outcome === "correct");
  $("#reveal-points").textContent = you && you.points > 0 ? `+${points(you.points)}` : "";
  renderScore();
  $("#reveal-streak").textContent = streakText(standing?.streak ?? 0);
  $("#reveal-place").textContent = placeText(standing);
  result.hidden = false;

  const explanation = $("#reveal-explanation");
  explanation.hidden = !reveal.explanation;
  explanation.textContent = reveal.explanation ?? "";
  // The top of the class, only those with points: a row of zeros tells nobody anything kind.
  const scored = reveal.top.filter((entry) => entry.score > 0);
  clear($("#reveal-top")).append(scored.length > 0 ? board(scored, { highlightId: session.playerId })
    : el("p", { class: "muted", text: "No points yet: the next question is a fresh start!" }));
  renderDots();
  $("#answer-status").textContent = "";
  $("#reveal").hidden = false;
  // The result and the child's own answer in view together, under the sticky countdown bar.
  result.style.scrollMarginTop = `${$("#quiz-top").offsetHeight + 8}px`;
  result.scrollIntoView({ block: "start" });
  services.sounds.play("chime");
  record(`reveal:${reveal.question}`);
  announce(`${title} ${streakText(standing?.streak ?? 0)} ${placeText(standing)}`);
}
