// Building the page. Text always goes in as text (textContent), never as HTML: nicknames and story
// text can contain anything, and none of it may ever run.

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

/** Shows exactly one of `sections` (by id), hiding the others. */
export function showOnly(sections, id) {
  for (const section of sections) $(`#${section}`).hidden = section !== id;
}

/** Every option has a colour AND a shape, so colour is never the only way to tell them apart. */
export const OPTION_SHAPES = ["▲", "◆", "●", "■", "★", "⬟", "⬢", "✚"];
export const SHAPE_NAMES = ["triangle", "diamond", "circle", "square", "star", "pentagon", "hexagon", "cross"];

export function optionColour(node, index) {
  node.style.setProperty("--option-color", `var(--option-${index % 8})`);
  return node;
}

export function optionButton(index, text, onChoose) {
  const button = el("button", {
    class: "option",
    type: "button",
    "data-index": index,
    "aria-label": `${SHAPE_NAMES[index % 8]}: ${text}`,
    onclick: onChoose ? () => onChoose(index) : undefined,
  },
  el("span", { class: "shape", "aria-hidden": "true", text: OPTION_SHAPES[index % 8] }),
  el("span", { class: "label", text }),
  el("span", { class: "mark", "aria-hidden": "true" }));
  return optionColour(button, index);
}

/** Progress dots, one per question: green right, red wrong, grey missed or not yet. */
export function progressDots(results, count) {
  const words = { correct: "right", wrong: "wrong", missed: "missed", skipped: "skipped" };
  const dots = el("div", { class: "dots", role: "list", "aria-label": "Your answers so far" });
  for (let i = 0; i < count; i++) {
    const result = results[i];
    dots.append(el("span", { class: `dot ${result ?? "pending"}`, role: "listitem", "aria-label": `Question ${i + 1}: ${words[result] ?? "not yet"}`, title: `Question ${i + 1}: ${words[result] ?? "not yet"}` }));
  }
  return dots;
}

export function board(entries, highlightId) {
  const list = el("ol", { class: "board" });
  for (const entry of entries) {
    list.append(el("li", { class: entry.id === highlightId ? "me" : "" },
      el("span", { class: "rank", text: `${entry.rank}.` }),
      el("span", { class: "name", text: entry.nickname }),
      el("span", { class: "points", text: `${entry.score}` })));
  }
  return list;
}

export function podium(entries) {
  const places = [["second", "🥈"], ["first", "🥇"], ["third", "🥉"]];
  const byRank = (rank) => entries.filter((entry) => entry.rank === rank);
  const node = el("div", { class: "podium", role: "list", "aria-label": "Podium" });
  for (const [place, medal] of places) {
    const rank = place === "first" ? 1 : place === "second" ? 2 : 3;
    const winners = byRank(rank);
    if (winners.length === 0) continue;
    node.append(el("div", { class: `step ${place}`, role: "listitem", "aria-label": `Place ${rank}` },
      el("div", { class: "who" },
        el("strong", { text: winners.map((w) => w.nickname).join(", ") }),
        el("span", { text: `${winners[0].score} points` })),
      el("div", { class: "pillar", "aria-hidden": "true", text: medal })));
  }
  return node;
}

/** Announces a sentence to screen readers through a polite live region. */
export function announce(text) {
  const region = $("#announcer");
  if (!region) return;
  region.textContent = "";
  setTimeout(() => { region.textContent = text; }, 50);
}

export function reducedMotion() {
  return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}
