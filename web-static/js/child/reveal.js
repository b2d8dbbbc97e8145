// The reveal: the child's own answer stays in view beside the result, marked "Your answer"; the right
// answer says so in words; points, the streak ("🔥 3 in a row") and the place ("3rd place, 120 points
// behind Ana"); the explanation and the top of the class below.

import { $, el, clear, announce, board, points, streakText } from "../dom.js";
import { markReveal } from "../options.js";
import { state, services, show, record, saveSession, setStanding, placeText } from "./store.js";
import { stopTimers, renderDots } from "./question.js";

export function showReveal(reveal) {
  stopTimers();
  state.revealed = true;
  if (state.pending) {
    state.pending = null;
    saveSession();
  }
  show("quiz");
  const you = reveal.you;
  const yours = you && you.option !== null && you.option !== undefined ? you.option : null;
  const options = $("#options");
  options.hidden = false;
  $("#get-ready").hidden = true;
  markReveal(options, reveal.correctOption, yours);
  const correctText = state.question?.options?.[reveal.correctOption] ?? "";

  let title;
  if (!you || you.outcome === "missed") title = `⏰ Time’s up! The answer was “${correctText}”.`;
  else if (you.outcome === "correct") title = "🎉 Yes! That’s right!";
  else if (you.outcome === "skipped") title = "This question was skipped.";
  else title = `Nice try! The answer was “${correctText}”.`;
  $("#reveal-title").textContent = title;
  const result = $("#reveal-result");
  result.classList.toggle("correct", you?.outcome === "correct");
  $("#reveal-points").textContent = you && you.points > 0 ? `+${points(you.points)}` : "";
  if (you) setStanding(you.standing);
  $("#reveal-streak").textContent = streakText(state.standing?.streak ?? 0);
  $("#reveal-place").textContent = placeText(state.standing);
  result.hidden = false;

  const explanation = $("#reveal-explanation");
  explanation.hidden = !reveal.explanation;
  explanation.textContent = reveal.explanation ?? "";
  // The top of the class, only those with points: a row of zeros tells nobody anything kind.
  const scored = reveal.top.filter((entry) => entry.score > 0);
  clear($("#reveal-top")).append(scored.length > 0 ? board(scored, { highlightId: state.playerId })
    : el("p", { class: "muted", text: "No points yet: the next question is a fresh start!" }));
  renderDots();
  $("#answer-status").textContent = "";
  $("#countdown-text").textContent = "";
  $("#countdown-fill").style.transform = "scaleX(0)";
  $("#reveal").hidden = false;
  // The result and the child's own answer in view together, under the sticky countdown bar.
  result.style.scrollMarginTop = `${$("#quiz-top").offsetHeight + 8}px`;
  result.scrollIntoView({ block: "start" });
  services.sounds.play("chime");
  record(`reveal:${reveal.question}`);
  announce(`${title} ${streakText(state.standing?.streak ?? 0)} ${placeText(state.standing)}`);
}
