// Answer options, the same on the phone and the projector. Every option has a shape as well as a colour,
// so colour is never the only way to tell them apart; and colours never contradict words: when an option
// names a colour ("Blue"), the whole question is drawn without fills (shapes on white) and each option
// that names a colour shows a swatch of that colour, its own.

import { el } from "./dom.js";
import { t } from "./i18n.js";

export const OPTION_SHAPES = ["▲", "◆", "●", "■", "★", "⬟", "⬢", "✚"];
const SHAPE_KEYS = ["shape.triangle", "shape.diamond", "shape.circle", "shape.square", "shape.star", "shape.pentagon", "shape.hexagon", "shape.cross"];

/** The name of option `index`'s shape, for screen readers ("triangle: Blue"). */
export function shapeName(index) {
  return t(SHAPE_KEYS[index % 8]);
}

// Colour words in the languages the sample stories use (English, Spanish) and a few more, with the colour
// each names. Matched as whole words, ignoring case and accents.
const COLOUR_WORDS = {
  red: "#d32f2f", blue: "#1565c0", green: "#2e7d32", yellow: "#fdd835", orange: "#ef6c00", purple: "#6a1b9a",
  violet: "#7e57c2", pink: "#ec407a", brown: "#6d4c41", black: "#000000", white: "#ffffff", grey: "#9e9e9e",
  gray: "#9e9e9e", gold: "#d4a017", golden: "#d4a017", silver: "#c0c0c0", turquoise: "#26c6da", navy: "#1a237e",
  rojo: "#d32f2f", roja: "#d32f2f", azul: "#1565c0", verde: "#2e7d32", amarillo: "#fdd835", amarilla: "#fdd835",
  naranja: "#ef6c00", morado: "#6a1b9a", morada: "#6a1b9a", rosa: "#ec407a", rosado: "#ec407a", marron: "#6d4c41",
  cafe: "#6d4c41", negro: "#000000", negra: "#000000", blanco: "#ffffff", blanca: "#ffffff", gris: "#9e9e9e",
  rouge: "#d32f2f", bleu: "#1565c0", bleue: "#1565c0", vert: "#2e7d32", verte: "#2e7d32", jaune: "#fdd835",
  noir: "#000000", noire: "#000000", blanc: "#ffffff", blanche: "#ffffff",
  rot: "#d32f2f", blau: "#1565c0", grun: "#2e7d32", gelb: "#fdd835", schwarz: "#000000", weiss: "#ffffff", grau: "#9e9e9e",
  braun: "#6d4c41", lila: "#7e57c2",
};

function words(text) {
  return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").replace(/ß/g, "ss").toLowerCase().split(/[^a-z]+/).filter(Boolean);
}

/** The colours an option's text names, in order (for "Red and blue": both). */
export function coloursNamed(text) {
  const found = [];
  for (const word of words(text)) {
    const colour = COLOUR_WORDS[word];
    if (colour && !found.includes(colour)) found.push(colour);
  }
  return found;
}

/** Whether any option of a question names a colour: then no option gets a fill. */
export function namesColours(options) {
  return options.some((text) => coloursNamed(text).length > 0);
}

/** The colour an option is drawn in on a bar chart: its own fill, its own named colour, or neutral. */
export function barColour(index, text, neutral) {
  if (!neutral) return `var(--option-${index % 8})`;
  return coloursNamed(text)[0] ?? "#5d6276";
}

// Colours go in through the style object, never a style attribute (the pages' CSP allows no inline styles).
function swatch(colour) {
  const node = el("span", { class: "swatch", "aria-hidden": "true", "data-colour": colour });
  node.style.background = colour;
  return node;
}

/**
 * Fills `container` with one button per option. `onChoose(index)` makes them answer buttons; without it
 * they are shown only (the projector).
 */
export function renderOptions(container, options, onChoose) {
  const neutral = namesColours(options);
  container.replaceChildren();
  container.classList.toggle("neutral", neutral);
  container.classList.toggle("many", options.length > 4);
  container.classList.remove("locked", "revealed");
  options.forEach((text, index) => {
    // On the projector options are shown, not pressed: plain boxes, not disabled buttons.
    const button = el(onChoose ? "button" : "div", {
      class: "option",
      type: onChoose ? "button" : undefined,
      "data-index": index,
      onclick: onChoose ? () => onChoose(index) : undefined,
    },
    el("span", { class: "shape", "aria-hidden": "true", text: OPTION_SHAPES[index % 8] }),
    el("span", { class: "visually-hidden", text: `${shapeName(index)}: ` }),
    neutral ? coloursNamed(text).map(swatch) : null,
    el("span", { class: "label", dir: "auto", text }),
    el("span", { class: "tag" }));
    if (!neutral) button.style.setProperty("--option-color", `var(--option-${index % 8})`);
    container.append(button);
  });
  return neutral;
}

/** Marks the reveal on rendered options: the right one says so in words, and so does the child's own. */
export function markReveal(container, correctOption, yourOption = null) {
  container.classList.add("locked", "revealed");
  for (const button of container.querySelectorAll(".option")) {
    const index = Number(button.dataset.index);
    if (button.tagName === "BUTTON") button.disabled = true;
    const tag = button.querySelector(".tag");
    const isCorrect = index === correctOption;
    const isYours = yourOption !== null && yourOption !== undefined && index === yourOption;
    button.classList.toggle("correct", isCorrect);
    button.classList.toggle("wrong", isYours && !isCorrect);
    button.classList.toggle("chosen", isYours);
    if (isCorrect && isYours) tag.textContent = t("option.yours_right");
    else if (isCorrect) tag.textContent = t("option.right");
    else if (isYours) tag.textContent = t("option.yours");
    else tag.textContent = "";
  }
}
