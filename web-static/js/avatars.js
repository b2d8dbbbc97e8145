// A class child's picture (docs/protocol.md, "Classes"): one of the built-in animals
// (/avatars/NAME.svg, drawn by scripts/draw-avatars.py) or `emoji:` with one emoji. The picture is never
// the only way to tell children apart: their name is always beside it, so it is hidden from readers,
// and the class page names each animal in the reader's language.

import { el } from "./dom.js";
import { t } from "./i18n.js";

/** The built-in animals and the catalog key naming each (keys written out: the catalog test reads them). */
export const AVATARS = Object.freeze({
  owl: "avatar.owl", fox: "avatar.fox", bear: "avatar.bear", rabbit: "avatar.rabbit", cat: "avatar.cat", dog: "avatar.dog",
  frog: "avatar.frog", turtle: "avatar.turtle", lion: "avatar.lion", panda: "avatar.panda", penguin: "avatar.penguin",
  hedgehog: "avatar.hedgehog", koala: "avatar.koala", elephant: "avatar.elephant", whale: "avatar.whale", bee: "avatar.bee",
});

/** The picture as an element, decorative (the name beside it is what is read); the name's first letter when unknown. */
export function avatarPicture(avatar, name = "", className = "avatar") {
  const value = String(avatar ?? "");
  if (Object.hasOwn(AVATARS, value)) {
    return el("img", { class: className, src: `/avatars/${value}.svg`, alt: "", width: "96", height: "96", draggable: "false" });
  }
  const emoji = value.startsWith("emoji:") ? value.slice("emoji:".length) : "";
  const letter = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(String(name))][0]?.segment ?? "";
  return el("span", { class: `${className} avatar-text`, "aria-hidden": "true", text: emoji || letter.toLocaleUpperCase() });
}

/** The picture's name in the page's language ("Owl"), or the emoji itself. */
export function avatarLabel(avatar) {
  const value = String(avatar ?? "");
  if (Object.hasOwn(AVATARS, value)) return t(AVATARS[value]);
  return value.startsWith("emoji:") ? value.slice("emoji:".length) : value;
}
