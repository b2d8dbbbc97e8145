// The name-picker of a class room (docs/protocol.md, "Class rooms"): the page asks the room for its names
// (`names` as the first message) and, when the room belongs to a class, shows every child's name and
// picture as a big button instead of the nickname field, so a small child joins by one tap and no keyboard
// comes up. A name someone holds is greyed out and says "taken" in words; the list follows the room live.
// A room without a class answers no class, and the typed nickname comes back; its `join` then goes on the
// same connection.

import { $, el, clear, announce, written } from "../dom.js";
import { t, isolate } from "../i18n.js";
import { ERROR } from "../error-codes.js";
import { avatarPicture } from "../avatars.js";
import { session, services, show, advance } from "./store.js";
import { EVENT, isPicking } from "./join-stage.js";

let connect = () => {};
/** The last `names` answer of a class room, kept to word the grid again. */
let picked = { className: null, children: [] };
/** Words for the picker's error box, made now so a change of language words them again. */
let errorWords = null;
/** Words for the picker's status line. */
let statusWords = null;
/** Words for the picker's kind note (a name given back: nobody did anything wrong). */
let noteWords = null;

export function setPickerConnect(connectToRoom) {
  connect = connectToRoom;
  $("#picker-other-code").addEventListener("click", otherCode);
}

/** The picker hides the code field: a child who typed a wrong code gets it back to type another. */
function otherCode() {
  if (services.connection) services.connection.stop();
  forgetPicker();
  setError(null);
  setNote(null);
  stopPicking();
  const field = $("#room-code");
  field.focus();
  field.select();
}

/**
 * Asks `code` for its names on a new connection; `note` (words) says why, when the child was sent back here:
 * as a problem, or (`kind`) as a kind word for a name given back, never shown as an error.
 */
export function startPicking(code, note = null, { kind = false } = {}) {
  if (services.connection) services.connection.stop();
  session.room = code;
  advance(EVENT.LOOK);
  session.token = null;
  session.member = null;
  show("join");
  // Which join screen is settled (`looking` until the room answers), for whoever waits on the page.
  $("#join").dataset.join = "looking";
  $("#join-form").hidden = true;
  $("#picker").hidden = false;
  titled("picker.looking_title");
  clear($("#picker-grid"));
  $("#picker-class").textContent = "";
  setStatus(() => t("picker.looking"));
  setError(kind ? null : note);
  setNote(kind ? note : null);
  connect();
}

/** Back to the typed join (the room has no class, or the picker gave up). */
export function stopPicking() {
  advance(EVENT.SHOW_FORM);
  showForm();
}

/** The typed join's form in place of the names. */
function showForm() {
  $("#picker").hidden = true;
  $("#join-form").hidden = false;
  $("#nickname-part").hidden = false;
  titled("join.title");
  $("#join").dataset.join = "form";
}

function titled(key) {
  const title = $("#join-title");
  title.dataset.i18n = key;
  title.textContent = t(key);
}

function setStatus(words) {
  statusWords = words;
  $("#picker-status").textContent = words ? words() : "";
}

function setNote(words) {
  noteWords = words;
  const box = $("#picker-note");
  box.hidden = !words;
  box.textContent = words ? words() : "";
  if (words) announce(box.textContent);
}

function setError(words) {
  errorWords = words;
  const box = $("#picker-error");
  box.hidden = !words;
  box.textContent = words ? words() : "";
  if (words) announce(box.textContent);
}

/** A `names` message: the grid, or (no class) the typed nickname on this same page. */
export function names(message) {
  if (!isPicking(session.stage)) return;
  if (!message.class) {
    // The connection stays open: the typed nickname's `join` goes on it (one hello per child, which counts
    // when a whole class joins from behind one school address).
    const note = errorWords ?? noteWords;
    advance(EVENT.NO_CLASS);
    showForm();
    if (note) {
      // Why the page came back here (a token of another room, say), on the typed join's screen.
      $("#join-error").textContent = note();
      $("#join-error").hidden = false;
    }
    $("#nickname").focus();
    return;
  }
  advance(EVENT.CLASS_NAMES);
  const first = picked.className === null;
  picked = { className: message.class.name, children: message.children ?? [] };
  render();
  $("#join").dataset.join = "picker";
  if (first) {
    announce(t("picker.announce", { class: isolate(picked.className), count: picked.children.length }));
    // Nothing that raises a keyboard takes the focus: the first free name does.
    $("#picker-grid button[aria-disabled='false']")?.focus();
  }
}

function render() {
  titled("picker.title");
  $("#picker-class").textContent = t("picker.class", { class: isolate(picked.className) });
  const grid = $("#picker-grid");
  const focused = document.activeElement?.dataset?.member ?? null;
  clear(grid);
  if (picked.children.length === 0) setStatus(() => t("picker.empty"));
  else setStatus(null);
  for (const child of picked.children) {
    const taken = Boolean(child.taken);
    const button = el("button", {
      type: "button", class: `name-pick${taken ? " taken" : ""}`, "data-member": child.id,
      // While a tap is on its way, no other name can be picked (a fresh list may come meanwhile).
      "aria-disabled": taken || session.member ? "true" : "false", onclick: () => pick(child),
    },
    avatarPicture(child.avatar, child.name, "avatar pick-avatar"),
    written(child.name, "span", { class: "pick-name" }),
    taken ? el("span", { class: "pick-taken", text: t("picker.taken") }) : null);
    grid.append(el("li", {}, button));
  }
  if (focused) grid.querySelector(`[data-member="${CSS.escape(focused)}"]`)?.focus();
}

function pick(child) {
  if (child.taken) {
    setError(() => t("picker.taken_help", { name: isolate(child.name) }));
    return;
  }
  if (session.member) return;
  advance(EVENT.TAP);
  session.member = child.id;
  session.nickname = child.name;
  setError(null);
  setNote(null);
  setStatus(() => t("picker.joining", { name: isolate(child.name) }));
  for (const button of $("#picker-grid").querySelectorAll("button")) button.setAttribute("aria-disabled", "true");
  services.connection.send({ type: "join", room: session.room, member: child.id });
}

/** A refusal the picker keeps its grid after (the name was taken a moment ago, or left the class). */
export function pickRefused(error) {
  advance(EVENT.TAP_REFUSED);
  session.member = null;
  setStatus(null);
  render();
  if (error.code === ERROR.NAME_TAKEN) setError(() => t("picker.taken_help", { name: isolate(error.params?.name ?? session.nickname ?? "") }));
  else setError(() => t("error.member_not_found"));
}

/** Words the picker again (the language changed). */
export function rewordPicker() {
  if ($("#picker").hidden) return;
  if (picked.className !== null) render();
  else titled($("#join-title").dataset.i18n);
  if (statusWords) $("#picker-status").textContent = statusWords();
  if (errorWords) $("#picker-error").textContent = errorWords();
  if (noteWords) $("#picker-note").textContent = noteWords();
}

/** Forgets the grid of the last room (a welcome came, or the page goes back to typing). */
export function forgetPicker() {
  picked = { className: null, children: [] };
  session.member = null;
}
