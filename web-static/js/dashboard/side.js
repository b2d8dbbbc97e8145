// The projector's side column and heading: where the room is, the top of the class (only children with
// points), the answer grid when the teacher turned it on, and the teacher's controls when there are some.

import { $, el, clear, progressDots, board, fitList } from "../dom.js";
import { describePhase } from "../phase.js";
import { storageBanner } from "../storage-banner.js";
import { room, services, setBodyClass } from "./store.js";
import { t, isolate } from "../i18n.js";

export function renderSide() {
  const state = room.state;
  $("#phase").textContent = describePhase(state);
  storageBanner($("#storage-banner"), state.storage);
  setBodyClass();
  $("#answered").textContent = state.phase === "question" && state.answers ? t("dash.answered", { answered: state.answers.answered, total: state.answers.total }) : "";
  const gridSection = $("#grid-section");
  const showGrid = Boolean(state.settings.answerGrid) && state.scoreboard.length > 0 && ["question", "reveal", "finished"].includes(state.phase);
  if (state.phase !== "lobby") {
    // Only children with points, and only the top: a projector never lists a row of zeros.
    const scored = state.scoreboard.filter((entry) => entry.score > 0);
    const top = scored.slice(0, showGrid ? 5 : 10);
    const boardNode = top.length > 0 ? board(top) : el("p", { class: "muted", text: t("board.empty") });
    clear($("#board")).append(boardNode);
    if (top.length > 0) fitList(boardNode, (n) => el("li", { class: "more", text: t("board.more_with_points", { count: n }) }), scored.length - top.length);
  }
  gridSection.hidden = !showGrid;
  if (showGrid) {
    const grid = clear($("#grid"));
    for (const entry of state.scoreboard) {
      grid.append(el("li", {}, el("span", { class: "name", dir: "auto", text: entry.nickname }),
        progressDots(entry.results ?? [], state.questionCount, t("dots.of", { name: isolate(entry.nickname) }))));
    }
    fitList(grid, (n) => el("li", { class: "more", text: t("board.more", { count: n }) }));
  }
  if (services.controls) services.controls.update(state);
}
