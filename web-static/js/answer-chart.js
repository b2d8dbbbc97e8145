// How the class answered a question, as the projector shows it at the reveal and the teacher's page
// beside the roster: every option with its shape, its text, a bar and the number of children who chose it;
// the right one said in words ("✓ The right answer") and drawn with a double border, not by colour alone.

import { el, clear } from "./dom.js";
import { OPTION_SHAPES, shapeName, namesColours, barColour } from "./options.js";
import { t, number } from "./i18n.js";

/**
 * Fills `list` (an <ol class="distribution">) with the reveal's `distribution` (children per option) and
 * `correctOption`; `texts` are the options as written (the question's), or null to number them.
 */
export function renderAnswerChart(list, { distribution, correctOption, texts = null }) {
  const words = texts ?? distribution.map((_, i) => t("option.number", { number: i + 1 }));
  const neutral = namesColours(words);
  const total = distribution.reduce((a, b) => a + b, 0);
  const rows = clear(list);
  rows.classList.toggle("many", distribution.length > 4);
  distribution.forEach((count, index) => {
    const correct = index === correctOption;
    const fill = el("div", { class: "fill" });
    fill.style.width = `${total ? (100 * count) / total : 0}%`;
    fill.style.setProperty("--bar-color", barColour(index, words[index], neutral));
    rows.append(el("li", { class: correct ? "correct" : "", "data-index": index },
      el("span", { class: "shape", "aria-hidden": "true", text: OPTION_SHAPES[index % 8] }),
      el("span", { class: "text" },
        el("span", { class: "visually-hidden", text: `${shapeName(index)}: ` }),
        el("bdi", { dir: "auto", text: words[index] ?? "" }),
        correct ? el("span", { class: "right", text: t("option.right") }) : null),
      el("div", { class: "track", "aria-hidden": "true" }, fill),
      el("span", { class: "count num" }, number(count), el("span", { class: "visually-hidden", text: ` ${t("reveal.children", { count })}` }))));
  });
  return rows;
}
