// The reveal: the child's own answer stays in view beside the result, marked "Your answer"; the right
// answer says so in words; points, the streak ("🔥 3 in a row") and, when the teacher chose a contest,
// the place ("3rd place, 120 points behind Ana") and the top of the class; the explanation below.

import { $, el, clear, announce, board, streakText } from "../dom.js";
import { markReveal } from "../options.js";
import { t, isolate } from "../i18n.js";
import { room, session, services, show, record, saveSession, renderScore, placeText, competitive } from "./store.js";
import { clearCountdown, renderDots } from "./question.js";

// A reveal within this long of the deadline came because the time ran out (the server reveals at the
// deadline; the message and this page's estimate of the server's clock take a moment).
const DEADLINE_SLACK_MS = 1000;
/** Whether the time of the question last revealed really ran out: {question, ranOut}. */
let timeUp = null;

/**
 * Called with a `reveal` and the state before it (`before`: its question's deadline and whether it was
 * paused): a teacher may reveal early (or during a pause), and then no "Time's up!" is true. A reveal this
 * page did not see come (a welcome after a reload) says neither.
 */
export function revealComing(reveal, before) {
  const question = before.question;
  const clock = services.connection?.clock;
  const ranOut = Boolean(question?.deadline && clock && before.phase === "question" && !before.paused
    && question.index === reveal.question && clock.now() >= question.deadline - DEADLINE_SLACK_MS);
  timeUp = { question: reveal.question, ranOut };
}

/** `quiet`: only the words again (the language changed): no sound, no scrolling, nothing recorded. */
export function showReveal(reveal, { quiet = false } = {}) {
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
  const answer = isolate(correctText);
  const ranOut = timeUp?.question === reveal.question && timeUp.ranOut;
  if (!you || you.outcome === "missed") title = t(ranOut ? "reveal.missed" : "reveal.here_is", { answer });
  else if (you.outcome === "correct") title = t("reveal.correct");
  else if (you.outcome === "skipped") title = t("reveal.skipped");
  else title = t("reveal.wrong", { answer });
  $("#reveal-title").textContent = title;
  const result = $("#reveal-result");
  result.classList.toggle("correct", you?.outcome === "correct");
  $("#reveal-points").textContent = you && you.points > 0 ? t("reveal.plus_points", { count: you.points }) : "";
  renderScore();
  $("#reveal-streak").textContent = streakText(standing?.streak ?? 0);
  $("#reveal-place").textContent = placeText(standing);
  result.hidden = false;

  const explanation = $("#reveal-explanation");
  explanation.hidden = !reveal.explanation;
  explanation.textContent = reveal.explanation ?? "";
  // The top of the class, in a competitive room only (otherwise the server names nobody), and only those
  // with points: a row of zeros tells nobody anything kind.
  const scored = reveal.top.filter((entry) => entry.score > 0);
  const showTop = competitive() || scored.length > 0;
  $("#reveal-top").hidden = !showTop;
  $("#reveal-top").previousElementSibling.hidden = !showTop;
  clear($("#reveal-top")).append(!showTop ? "" : scored.length > 0 ? board(scored, { highlightId: session.playerId })
    : el("p", { class: "muted", text: t("reveal.no_points") }));
  renderDots();
  $("#answer-status").textContent = "";
  $("#reveal").hidden = false;
  if (quiet) return;
  // The result and the child's own answer in view together, under the sticky countdown bar.
  result.style.scrollMarginTop = `${$("#quiz-top").offsetHeight + 8}px`;
  result.scrollIntoView({ block: "start" });
  services.sounds.play("chime");
  record(`reveal:${reveal.question}`);
  announce(`${title} ${streakText(standing?.streak ?? 0)} ${placeText(standing)}`);
}
