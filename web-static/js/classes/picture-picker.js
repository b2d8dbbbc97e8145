// A child's picture in the class editor: the chosen picture, opening a grid of the pictures themselves
// (the sixteen animals and some emoji) as radio buttons. Arrow keys move between them (the browser's own
// radio group), each is named by its animal or its emoji for screen readers, and Enter or Escape closes
// the grid with the choice made. docs/protocol.md, "Classes" (the avatars a class accepts).

import { el } from "../dom.js";
import { t } from "../i18n.js";
import { AVATARS, avatarPicture, avatarLabel } from "../avatars.js";

/** Emoji a child may have as their picture besides the animals (any one emoji is allowed; these are offered). */
const EMOJI = ["🦄", "🐙", "🦋", "🐞", "🦖", "🌟", "🌈", "🚀", "⚽", "🍓"].map((emoji) => `emoji:${emoji}`);

/**
 * The pictures as radio buttons showing the pictures, in a disclosure that shows the chosen one: arrow keys
 * move between them (the browser's radio group), each named by its animal or its emoji; Enter or Escape
 * closes the choice.
 */
export function picturePicker(child, index, onChange) {
  const choices = [...Object.keys(AVATARS), ...EMOJI];
  if (child.avatar && !choices.includes(child.avatar)) choices.push(child.avatar);
  const group = `child-picture-${child.row}`;
  const summaryText = el("span", { class: "picture-summary-text", id: `${group}-chosen` });
  const shown = el("span", { class: "picture-summary-picture" });
  const details = el("details", { class: "picture-picker" });
  // Read as "Picture, Owl": the field's label, then the chosen picture.
  const summary = el("summary", { "aria-labelledby": `${group}-label ${group}-chosen` }, shown, summaryText);
  const describe = () => {
    shown.replaceChildren(avatarPicture(child.avatar, child.name, "avatar picture-choice-image"));
    summaryText.textContent = avatarLabel(child.avatar);
    // An emoji is its own name: shown once (the picture), read once (the name).
    summaryText.classList.toggle("visually-hidden", !Object.hasOwn(AVATARS, child.avatar));
  };
  const options = choices.map((value) => {
    const input = el("input", { type: "radio", name: group, value, class: "picture-radio" });
    input.checked = value === child.avatar;
    input.addEventListener("change", () => {
      child.avatar = value;
      describe();
      onChange();
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === "Escape") {
        event.preventDefault();
        details.open = false;
        summary.focus();
      }
    });
    return el("label", { class: "picture-choice" }, input, avatarPicture(value, child.name, "avatar picture-choice-image"),
      el("span", { class: "visually-hidden", text: avatarLabel(value) }));
  });
  details.append(summary, el("fieldset", { class: "picture-choices" },
    el("legend", { class: "visually-hidden", text: t("classes.picture_legend", { number: index + 1 }) }), ...options));
  details.addEventListener("toggle", () => {
    if (details.open) (options.find((o) => o.querySelector("input").checked) ?? options[0]).querySelector("input").focus();
  });
  // Like a menu: it closes when the focus or a click goes elsewhere.
  details.addEventListener("focusout", (event) => {
    if (details.open && event.relatedTarget && !details.contains(event.relatedTarget)) details.open = false;
  });
  details.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && details.open) {
      event.preventDefault();
      details.open = false;
      summary.focus();
    }
  });
  describe();
  return details;
}

