// Pictures of a picture story, the same on the phone and the projector: the picture of the sentence
// being read (above the text on a phone, beside it on the projector), a question's picture, and picture
// options (each option's label stays its words: what a screen reader says and the results show, so the
// picture inside the option is decorative). Pictures come from `/pictures/<id>` with `?room=` for the
// proxy, and the smaller copy on phones.

import { el } from "./dom.js";

/** The URL of picture `id`: `phone` asks for the copy for phones; `room` routes it to the room's node. */
export function pictureURL(id, { room, phone }) {
  const query = new URLSearchParams();
  if (room) query.set("room", room);
  if (phone) query.set("size", "phone");
  return `/pictures/${encodeURIComponent(id)}?${query}`;
}

function picture(view, options, className) {
  return el("img", { class: className, src: pictureURL(view.id, options), alt: view.alt ?? "", decoding: "async", draggable: "false" });
}

/** The story's picture, shown for the sentence being read. `before` is the story text it goes beside. */
export class StoryPictures {
  constructor({ before, room, phone }) {
    this.before = before;
    this.room = room;
    this.phone = phone;
    this.bySentence = new Map();
    this.figure = null;
    this.shown = null;
    // Which picture was on screen for which sentence, for the tests (as `window.storycircle.events`).
    this.log = [];
    if (window.storycircle) window.storycircle.pictures = this.log;
  }

  /** Takes the pictures of a `narration.plan` (none for a story without them) and shows the first. */
  load(plan) {
    this.bySentence = new Map((plan.pictures ?? []).map((p) => [p.sentence, p]));
    const section = this.before.parentElement;
    section.classList.toggle("has-picture", this.bySentence.size > 0);
    if (this.bySentence.size === 0) {
      this.figure?.remove();
      this.figure = null;
      this.shown = null;
      return;
    }
    if (!this.figure) {
      this.figure = el("figure", { id: "story-picture", class: "story-picture" });
      section.insertBefore(this.figure, this.before);
    }
    // Fetched now, so that each is on screen the moment its sentence starts.
    for (const p of new Map([...this.bySentence.values()].map((p) => [p.id, p])).values()) {
      new Image().src = pictureURL(p.id, this);
    }
    this.show(Math.min(...this.bySentence.keys()));
  }

  /** Shows the picture of sentence `index`; a sentence without one keeps the picture before it. */
  show(index) {
    if (!this.figure) return;
    let found = null;
    for (let i = index; i >= 0 && !found; i--) found = this.bySentence.get(i) ?? null;
    if (!found) found = this.bySentence.get(Math.min(...this.bySentence.keys()));
    this.log.push({ sentence: index, picture: found.id });
    if (this.shown?.id === found.id && this.shown?.alt === found.alt) return;
    this.shown = found;
    this.figure.replaceChildren(picture(found, this, "story-image"));
    this.figure.dataset.picture = found.id;
    this.figure.dataset.sentence = String(index);
  }
}

/**
 * Adds a question's pictures to what `renderOptions` drew: the question's own picture after `heading`,
 * and one picture in each option.
 */
export function showQuestionPictures(view, { heading, options, room, phone }) {
  const section = heading.parentElement;
  section.querySelector("#question-picture")?.remove();
  if (view.picture) {
    heading.after(el("figure", { id: "question-picture", class: "question-picture" }, picture(view.picture, { room, phone }, "question-image")));
  }
  const pictures = view.optionPictures ?? [];
  options.classList.toggle("picture-options", pictures.length > 0);
  if (pictures.length === 0) return;
  for (const option of options.querySelectorAll(".option")) {
    const p = pictures[Number(option.dataset.index)];
    if (!p) continue;
    // Decorative: the option's label is its name for screen readers.
    const image = picture({ id: p.id, alt: "" }, { room, phone }, "option-image");
    option.insertBefore(image, option.querySelector(".label"));
  }
}

/** The reveal's rows on the projector get their option's picture too. */
export function showRevealPictures(view, rows, { room }) {
  const pictures = view?.optionPictures ?? [];
  rows.classList.toggle("picture-options", pictures.length > 0);
  for (const row of rows.querySelectorAll("li")) {
    const p = pictures[Number(row.dataset.index)];
    if (p) row.querySelector(".shape")?.after(picture({ id: p.id, alt: "" }, { room, phone: true }, "option-image"));
  }
}
