// The class page: `/classes#token=ADMIN-TOKEN` lists the classes; `…&id=cls_…` shows one: its report
// ("what do I teach again tomorrow": every room it played with each question's share right and most
// chosen wrong answer, the children who need help, each child's rooms over time), the class CSV, a room
// started for it from a story of the library, and, per child, the deletion of their data (after a
// confirmation). `…&edit=1` (or "New class") edits the names and pictures; a save based on an old
// version shows both versions and lets the teacher choose. docs/protocol.md, "Classes".

import { $, el, clear, announce, written } from "../dom.js";
import { t, setLanguage, browserLanguage, number, isolate } from "../i18n.js";
import { fragmentParameters } from "../connection.js";
import { ERROR } from "../error-codes.js";
import { schoolApi, Refused, saveFile } from "../api.js";
import { sessionFailureKey } from "../session.js";
import { showAccountBar, offerSignIn, offerAdminScreen, nameListHeading } from "../account-bar.js";
import { AVATARS, avatarPicture } from "../avatars.js";
import { picturePicker } from "./picture-picker.js";

// The school's key leaves the address before anything can wait (schoolApi takes it at once).
const pending = schoolApi();
await setLanguage(fragmentParameters().get("lang") ?? browserLanguage());
const api = await pending;

const MAX_CHILDREN = 60;
const SCREENS = ["class-list", "class-edit", "class-view"];
const state = { classes: [], current: null, report: null, editing: null, conflict: null };
window.storycircle = { classes: state };
const dateFormat = () => new Intl.DateTimeFormat(document.documentElement.lang || undefined, { dateStyle: "medium", timeStyle: "short" });
const percent = () => new Intl.NumberFormat(document.documentElement.lang || undefined, { style: "percent" });

// ---- Words for what the server said ----

const PROBLEMS = {
  name_empty: "classes.problem.name_empty", name_invalid: "classes.problem.name_invalid", name_too_long: "classes.problem.name_too_long",
  duplicate_name: "classes.problem.duplicate_name", avatar_unknown: "classes.problem.avatar_unknown",
  class_too_large: "classes.problem.class_too_large", class_name_taken: "classes.problem.class_name_taken",
  member_not_found: "classes.problem.member_not_found",
};

function failureText(failure) {
  if (!(failure instanceof Refused)) return t("classes.error.network");
  const { code, params = {} } = failure.error;
  const session = sessionFailureKey(failure, api);
  if (session) return t(session);
  switch (code) {
    case ERROR.CLASS_NOT_FOUND: return t("classes.error.class_not_found");
    case ERROR.MEMBER_NOT_FOUND: return t("classes.error.member_not_found");
    case ERROR.CLASS_IN_USE: return t("classes.error.class_in_use");
    case ERROR.INVALID_CLASS: return t("classes.error.invalid_class", { count: failure.error.problems?.length ?? 0 });
    case ERROR.STORY_NOT_FOUND: return t("library.error.story_not_found");
    case ERROR.UNAUTHORIZED: case ERROR.WRONG_ROLE: return t("classes.error.token");
    case ERROR.STORAGE_UNAVAILABLE: return t("library.error.storage");
    case ERROR.VERSION_CONFLICT: return t("classes.conflict_text", { version: params.version ?? "" });
    default: return t("library.error.other");
  }
}

function problemText(problem) {
  const params = problem.params ?? {};
  return t(PROBLEMS[problem.code] ?? "classes.problem.other", {
    max: Number(params.max ?? 0), count: Number(params.count ?? 0), name: isolate(params.name ?? ""), other: otherName(params.other),
  });
}

/** "children[0].name" → that child's name as the form has it now. */
function otherName(path) {
  const index = Number(/children\[(\d+)\]/.exec(path ?? "")?.[1]);
  return Number.isInteger(index) ? isolate(state.editing?.children[index]?.name ?? "") : "";
}

function showMessage(text, { good = false } = {}) {
  const box = $("#classes-message");
  box.className = good ? "message good" : "message error";
  box.setAttribute("role", good ? "status" : "alert");
  box.textContent = text;
  box.hidden = false;
}

function hideMessage() {
  $("#classes-message").hidden = true;
}

function show(screen) {
  for (const id of SCREENS) $(`#${id}`).hidden = id !== screen;
  $("#class-conflict").hidden = true;
}

/** A place on this page; the key stays in the tab's session, never in the address. */
function link(extra = {}) {
  const fragment = new URLSearchParams(extra).toString();
  return fragment ? `/classes#${fragment}` : "/classes";
}

// ---- The list ----

async function showList() {
  show("class-list");
  try {
    const { classes } = await api.call("GET", "/api/classes");
    state.classes = classes;
    const list = clear($("#class-list-items"));
    for (const item of classes) {
      const title = `class-${item.id}`;
      list.append(el("li", { class: "library-story", "data-class": item.id, "aria-labelledby": title },
        el("h2", { id: title }, el("a", { href: link({ id: item.id }), dir: "auto", text: item.name })),
        el("p", { class: "facts", text: t("classes.facts", { count: item.children, changed: dateFormat().format(new Date(item.changedAt)) }) })));
    }
    $("#class-list-status").textContent = classes.length ? t("classes.count", { count: classes.length }) : t("classes.empty");
  } catch (failure) {
    $("#class-list-status").textContent = failureText(failure);
  }
}

// ---- One class: the report ----

async function showClass(id) {
  show("class-view");
  try {
    const [current, report] = await Promise.all([
      api.call("GET", `/api/classes/${encodeURIComponent(id)}`),
      api.call("GET", `/api/classes/${encodeURIComponent(id)}/report`),
    ]);
    state.current = current;
    state.report = report;
    renderClass();
    loadStories();
  } catch (failure) {
    showMessage(failureText(failure));
  }
}

function renderClass() {
  const { current, report } = state;
  $("#class-view-title").textContent = current.name;
  document.title = `${t("classes.page")} · ${current.name}`;
  $("#class-view-facts").textContent = t("classes.view_facts", {
    children: t("classes.children_count", { count: current.children.length }), rooms: t("classes.rooms_played", { count: report.rooms.length }),
    speed: t(current.speedPoints ? "classes.speed_points" : "classes.speed_off"),
  });
  renderHelp(report.needsHelp, report.rooms.length);
  renderRooms(report.rooms);
  renderChildren(report.children);
}

function renderHelp(children, rooms) {
  const list = clear($("#report-help"));
  // "Every answer was right" only once there were answers: before the first room there were none.
  if (children.length === 0) list.append(el("li", { class: "muted", text: t(rooms ? "classes.help_nobody" : "classes.help_no_rooms") }));
  for (const child of children) {
    list.append(el("li", { class: "class-member", "data-help": child.member },
      avatarPicture(child.avatar, child.name, "avatar member-avatar"),
      el("span", { class: "member-text" }, written(child.name, "strong"),
        el("span", { class: "member-state", text: helpText(child) }))));
  }
}

/** "2 of 3 not right yet, in 1 room · 1 question not answered": a question not answered is not right yet. */
function helpText(child) {
  const notYet = child.notYetRight ?? child.wrong;
  const line = t("classes.help_line", { wrong: notYet, answered: child.answered + (child.unanswered ?? 0), count: child.rooms });
  return child.unanswered ? `${line} · ${t("classes.questions_unanswered", { count: child.unanswered })}` : line;
}

/** "50% · 2 of 4 right · 1 did not answer": over the children there when the question was asked. */
function shareText(question, share) {
  if (question.present === undefined) return "";  // a server from before the counts
  if (!question.present) return t("classes.share_none");
  const text = t("classes.share", { share: percent().format(share), right: question.right, count: question.present });
  return question.unanswered ? `${text} · ${t("classes.unanswered", { count: question.unanswered })}` : text;
}

function renderRooms(rooms) {
  const box = clear($("#report-rooms"));
  if (rooms.length === 0) box.append(el("p", { class: "muted", text: t("classes.rooms_none") }));
  for (const room of rooms) {
    const heading = `room-${room.code}`;
    const rows = room.questions.map((question) => {
      const share = Number(question.shareRight ?? 0);
      const wrong = question.mostChosenWrong;
      // Through the CSSOM: the pages' Content-Security-Policy refuses style attributes.
      const fill = el("div", { class: "share-fill" });
      fill.style.width = `${Math.round(share * 100)}%`;
      return el("tr", { "data-question": question.index },
        el("th", { scope: "row", class: "question-cell" }, el("span", { class: "num", text: `${number(question.index + 1)}. ` }), written(question.prompt, "span")),
        el("td", {}, el("div", { class: "share" },
          el("div", { class: "share-track", "aria-hidden": "true" }, fill),
          el("span", { class: "share-text", text: shareText(question, share) }))),
        el("td", { class: "wrong-cell" }, wrong
          ? el("span", {}, written(wrong.text, "bdi"), el("span", { class: "muted", text: ` ${t("classes.wrong_count", { count: wrong.count })}` }))
          : el("span", { class: "muted", text: t("classes.no_wrong") })));
    });
    box.append(el("section", { class: "report-room", "data-room": room.code, "aria-labelledby": heading },
      el("h3", { id: heading, dir: "auto", text: t("classes.room_title", { title: isolate(room.title), code: room.code }) }),
      el("p", { class: "muted", text: t("classes.room_facts", { started: dateFormat().format(new Date(room.startedAt)), count: room.players }) }),
      el("div", { class: "row" }, el("button", { type: "button", class: "secondary", "data-action": "room-csv",
        text: t("classes.room_csv", { code: room.code }), onclick: () => downloadCSV(room.code) })),
      // Scrolls sideways on a phone: reachable by keyboard, named by its room.
      el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-labelledby": heading }, el("table", { class: "players-table" },
        el("thead", {}, el("tr", {},
          el("th", { scope: "col", text: t("classes.col_question") }),
          el("th", { scope: "col", text: t("classes.col_right") }),
          el("th", { scope: "col", text: t("classes.col_wrong") }))),
        el("tbody", {}, rows)))));
  }
}

function renderChildren(children) {
  const rows = clear($("#report-children tbody"));
  $("#report-children-status").textContent = "";
  for (const child of children) {
    const name = isolate(child.name);
    const rooms = child.rooms.length === 0 ? el("span", { class: "muted", text: t("classes.child_no_rooms") })
      : el("ul", { class: "child-rooms" }, child.rooms.map((room) => {
        // "of" the questions the child was there for, answered or not ("0 of 2 right", never "0 of 0").
        const present = room.present ?? room.answered + (room.unanswered ?? 0);
        const line = t("classes.child_room", {
          started: dateFormat().format(new Date(room.startedAt)), code: room.code, points: room.points, right: room.right, count: present,
        });
        return el("li", { text: room.unanswered ? `${line} · ${t("classes.questions_unanswered", { count: room.unanswered })}` : line });
      }));
    // Roles said outright: on a phone the rows are laid out as cards (classes.css), which a browser would
    // otherwise take for no table at all.
    rows.append(el("tr", { "data-child": child.member, role: "row" },
      el("th", { scope: "row", role: "rowheader" }, el("span", { class: "share" }, avatarPicture(child.avatar, child.name, "avatar member-avatar"), written(child.name, "span"))),
      el("td", { role: "cell" }, rooms),
      el("td", { role: "cell" }, el("div", { class: "child-data" },
        el("button", { type: "button", class: "secondary", "data-action": "export-json", "data-member": child.member,
          "aria-label": t("classes.export_json_label", { name }), text: t("classes.export_json"), onclick: () => exportChild(child, "json") }),
        el("button", { type: "button", class: "secondary", "data-action": "export-csv", "data-member": child.member,
          "aria-label": t("classes.export_csv_label", { name }), text: t("classes.export_csv"), onclick: () => exportChild(child, "csv") }),
        el("button", { type: "button", class: "danger", "data-action": "erase", "data-member": child.member,
          "aria-label": t("classes.erase_label", { name }), text: t("classes.erase"), onclick: () => erase(child) })))));
  }
}

/** Everything stored about one child (a parent's request), as the server's JSON or CSV file. */
async function exportChild(child, format) {
  const path = `/api/classes/${encodeURIComponent(state.current.id)}/members/${encodeURIComponent(child.member)}/data`;
  try {
    const file = await api.file(format === "csv" ? `${path}?format=csv` : path, `${child.name} ${state.current.name}.${format}`);
    saveFile(file);
    // Said beside the button pressed, not at the top of a long page.
    $("#report-children-status").textContent = t("classes.exported", { name: isolate(child.name) });
  } catch (failure) {
    showMessage(failureText(failure));
  }
}

async function erase(child) {
  const name = isolate(child.name);
  const sure = await confirm({ title: t("classes.erase_title", { name }), body: t("classes.erase_body", { name }), yes: t("classes.erase_yes") });
  if (!sure) return;
  try {
    await api.call("DELETE", `/api/classes/${encodeURIComponent(state.current.id)}/members/${encodeURIComponent(child.member)}/data`);
    showMessage(t("classes.erased", { name }), { good: true });
    await showClass(state.current.id);
    $("#class-view-title").focus?.();
  } catch (failure) {
    showMessage(failureText(failure));
  }
}

async function loadStories() {
  const select = $("#class-story");
  try {
    const { stories } = await api.call("GET", "/api/stories?limit=100");
    const before = select.value;
    clear(select).append(...stories.map((story) => el("option", { value: story.id, dir: "auto", text: story.title })));
    if (before) select.value = before;
    $("#class-start").disabled = stories.length === 0;
  } catch {
    $("#class-start").disabled = true;
  }
}

async function startRoom() {
  hideMessage();
  const storyId = $("#class-story").value;
  if (!storyId) return;
  try {
    const room = await api.call("POST", "/api/rooms", { storyId, classId: state.current.id });
    $("#class-room-started-text").textContent = t("library.room_started", { title: room.title, code: room.code });
    // A tab of its own: the class page stays where it was, for the next room or the report. On this page's
    // own origin: the server's printed address is another origin to the browser, whose tab would not
    // have this tab's school key.
    $("#class-room-teacher").href = sameOrigin(room.teacherURL);
    $("#class-room-projector").href = sameOrigin(room.dashboardURL);
    $("#class-room-started").hidden = false;
    $("#class-room-teacher").focus();
  } catch (failure) {
    showMessage(failureText(failure));
  }
}

/** The server's link with this page's origin: its path, query and fragment. */
function sameOrigin(address) {
  const url = new URL(address, location.href);
  return `${location.origin}${url.pathname}${url.search}${url.hash}`;
}

/**
 * The class CSV, or with `room` that room's rows only. It comes with the token, so it is fetched and
 * handed to the browser as a file.
 */
async function downloadCSV(room = null) {
  try {
    const query = room ? `?room=${encodeURIComponent(room)}` : "";
    saveFile(await api.file(`/api/classes/${encodeURIComponent(state.current.id)}/results.csv${query}`, `${state.current.name}.csv`));
    announce(t("classes.csv_done"));
  } catch (failure) {
    showMessage(failureText(failure));
  }
}

async function deleteClass() {
  const name = isolate(state.current.name);
  const sure = await confirm({ title: t("classes.delete_title", { name }), body: t("classes.delete_body", { name }), yes: t("classes.delete_yes") });
  if (!sure) return;
  try {
    await api.call("DELETE", `/api/classes/${encodeURIComponent(state.current.id)}`);
    location.hash = "";
    showMessage(t("classes.deleted", { name }), { good: true });
  } catch (failure) {
    showMessage(failureText(failure));
  }
}

// ---- Editing: the name, and each child's name and picture ----

function startEditing(current) {
  hideMessage();
  state.editing = current
    ? { id: current.id, version: current.version, name: current.name, children: current.children.map((c) => ({ ...c })), speedPoints: Boolean(current.speedPoints) }
    : { id: null, version: null, name: "", children: [], speedPoints: false };
  show("class-edit");
  const title = $("#class-edit-title");
  title.textContent = current ? t("classes.edit_title", { name: isolate(current.name) }) : t("classes.new_title");
  title.dir = "auto";
  $("#class-name").value = state.editing.name;
  $("#class-speed-points").checked = state.editing.speedPoints;
  clearProblems();
  renderChildRows();
  $("#class-name").focus();
}

let nextRow = 0;

function renderChildRows(focusIndex = null) {
  const list = clear($("#class-children"));
  state.editing.children.forEach((child, index) => {
    child.row ??= ++nextRow;
    const nameId = `child-name-${child.row}`;
    const problemId = `child-problem-${child.row}`;
    child.avatar ??= "owl";
    const picture = el("span", { class: "child-picture" }, avatarPicture(child.avatar, child.name, "avatar member-avatar"));
    const nameInput = el("input", { id: nameId, type: "text", autocomplete: "off", dir: "auto", value: child.name, "aria-describedby": problemId,
      enterkeyhint: "next", oninput: (event) => { child.name = event.target.value; } });
    // Enter goes on to the next child's name (a new row after the last), as in a list being typed; it
    // never saves the class: that is the Save button's alone.
    nameInput.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.isComposing) return;
      event.preventDefault();
      if (index < state.editing.children.length - 1) list.querySelectorAll("input[type=text]")[index + 1]?.focus();
      else if (child.name.trim() && state.editing.children.length < MAX_CHILDREN) addChild();
    });
    const picker = picturePicker(child, index, () => picture.replaceChildren(avatarPicture(child.avatar, child.name, "avatar member-avatar")));
    list.append(el("li", { class: "class-child", "data-row": index },
      picture,
      el("div", {},
        el("div", { class: "child-fields" },
          el("div", {}, el("label", { for: nameId, text: t("classes.child_name", { number: index + 1 }) }), nameInput),
          el("div", { class: "picture-field" }, el("span", { class: "picture-label", id: `child-picture-${child.row}-label`, text: t("classes.child_avatar") }), picker),
          el("button", { type: "button", class: "quiet", "data-action": "remove-child",
            "aria-label": t("classes.remove_child_label", { number: index + 1, name: isolate(child.name) }), text: t("classes.remove_child"),
            onclick: () => removeChild(index) })),
        el("p", { id: problemId, class: "field-problem", hidden: true }))));
  });
  $("#class-add-child").disabled = state.editing.children.length >= MAX_CHILDREN;
  if (focusIndex !== null) list.querySelectorAll("input[type=text]")[focusIndex]?.focus();
}

function addChild() {
  const used = new Set(state.editing.children.map((c) => c.avatar));
  const avatar = Object.keys(AVATARS).find((name) => !used.has(name)) ?? Object.keys(AVATARS)[state.editing.children.length % 16];
  state.editing.children.push({ name: "", avatar });
  renderChildRows(state.editing.children.length - 1);
}

function removeChild(index) {
  const [child] = state.editing.children.splice(index, 1);
  renderChildRows();
  announce(t("classes.child_removed", { name: isolate(child?.name ?? "") }));
  const buttons = $("#class-children").querySelectorAll("[data-action='remove-child']");
  (buttons[Math.min(index, buttons.length - 1)] ?? $("#class-add-child")).focus();
}

function clearProblems() {
  for (const node of document.querySelectorAll(".field-problem")) { node.hidden = true; node.textContent = ""; }
  for (const node of document.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
}

/** Each problem beside its field (`name`, `children`, `children[3].name`); the first such field focused. */
function showProblems(problems) {
  clearProblems();
  let first = null;
  const rows = $("#class-children").children;
  for (const problem of problems) {
    const child = /^children\[(\d+)\]\.(\w+)$/.exec(problem.path ?? "");
    let box;
    let field;
    if (child) {
      const row = rows[Number(child[1])];
      box = row?.querySelector(".field-problem");
      field = row?.querySelector(child[2] === "avatar" ? "summary" : "input[type=text]");
    } else if (problem.path === "name") {
      box = $("#class-name-problem");
      field = $("#class-name");
    } else {
      box = $("#class-children-problem");
      field = $("#class-add-child");
    }
    if (!box) continue;
    box.textContent = box.textContent ? `${box.textContent} ${problemText(problem)}` : problemText(problem);
    box.hidden = false;
    if (field && field.tagName !== "BUTTON") field.setAttribute("aria-invalid", "true");
    first ??= field;
  }
  first?.focus();
}

function editedBody(version = state.editing.version) {
  const children = state.editing.children.map(({ id, name, avatar }) => (id ? { id, name: name.trim(), avatar } : { name: name.trim(), avatar }));
  const body = { name: $("#class-name").value.trim(), children, speedPoints: $("#class-speed-points").checked };
  return version === null ? body : { version, ...body };
}

/**
 * New rows left blank (Enter after the last name adds one) are left out rather than refused; a child
 * already in the class whose name was cleared stays, for the server to ask for a name: leaving them out
 * would take them out of the class.
 */
function dropBlankRows() {
  const kept = state.editing.children.filter((child) => child.id || child.name.trim());
  if (kept.length === state.editing.children.length) return;
  state.editing.children = kept;
  renderChildRows();
}

async function save(version = state.editing.version) {
  hideMessage();
  state.editing.name = $("#class-name").value;
  dropBlankRows();
  try {
    if (state.editing.id) {
      await api.call("PUT", `/api/classes/${encodeURIComponent(state.editing.id)}`, editedBody(version));
    } else {
      const made = await api.call("POST", "/api/classes", editedBody(null));
      state.editing.id = made.id;
    }
    const id = state.editing.id;
    state.editing = null;
    showMessage(t("classes.saved"), { good: true });
    goTo({ id });
  } catch (failure) {
    if (failure instanceof Refused && failure.error.code === ERROR.VERSION_CONFLICT && failure.error.current) return showConflict(failure.error.current);
    if (failure instanceof Refused && failure.error.code === ERROR.INVALID_CLASS) showProblems(failure.error.problems ?? []);
    showMessage(failureText(failure));
  }
}

function showConflict(current) {
  state.conflict = current;
  $("#class-conflict-text").textContent = t("classes.conflict_text", { version: current.version });
  const names = (children) => children.map((child) => el("li", {}, avatarPicture(child.avatar, child.name, "avatar member-avatar"), " ", written(child.name)));
  clear($("#class-conflict-theirs")).append(...names(current.children));
  clear($("#class-conflict-yours")).append(...names(state.editing.children));
  $("#class-conflict").hidden = false;
  $("#class-conflict-load").focus();
}

// ---- Dialog ----

let answer = null;

function confirm({ title, body, yes }) {
  $("#classes-confirm-title").textContent = title;
  $("#classes-confirm-text").textContent = body;
  $("#classes-confirm-yes").textContent = yes;
  const returnTo = document.activeElement;
  $("#classes-confirm").showModal();
  $("#classes-confirm-no").focus();
  return new Promise((resolve) => {
    answer = (value) => {
      answer = null;
      $("#classes-confirm").close();
      returnTo?.focus?.();
      resolve(value);
    };
  });
}

$("#classes-confirm-no").addEventListener("click", () => answer?.(false));
$("#classes-confirm-yes").addEventListener("click", () => answer?.(true));
$("#classes-confirm").addEventListener("cancel", (event) => { event.preventDefault(); answer?.(false); });

// ---- Where the page is: the fragment says ----

function goTo(extra) {
  const next = new URLSearchParams(extra).toString();
  if (location.hash.slice(1) === next) route();
  else location.hash = next;
}

async function route() {
  const params = fragmentParameters();
  const id = params.get("id");
  $("#library-link").href = "/stories";
  $("#class-back").href = link();
  if (!id) return showList();
  if (params.get("edit")) {
    try {
      return startEditing(await api.call("GET", `/api/classes/${encodeURIComponent(id)}`));
    } catch (failure) {
      return showMessage(failureText(failure));
    }
  }
  return showClass(id);
}

$("#class-new").addEventListener("click", () => startEditing(null));
$("#class-add-child").addEventListener("click", addChild);
// An open picture picker closes on a click anywhere else, as a menu does.
document.addEventListener("click", (event) => {
  for (const open of document.querySelectorAll(".picture-picker[open]")) if (!open.contains(event.target)) open.open = false;
});
// Enter in the class's name goes on to the children (the first one's name, or a first row); it never saves.
$("#class-name").addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || event.isComposing) return;
  event.preventDefault();
  const first = $("#class-children").querySelector("input[type=text]");
  if (first) first.focus();
  else addChild();
});
$("#class-speed-points").addEventListener("change", (event) => { if (state.editing) state.editing.speedPoints = event.target.checked; });
$("#class-form").addEventListener("submit", (event) => { event.preventDefault(); save(); });
// Whatever field Enter is pressed in (a picture, the checkbox), the class is saved only by its button.
$("#class-form").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && event.target instanceof HTMLInputElement) event.preventDefault();
});
$("#class-cancel").addEventListener("click", () => { state.editing = null; route(); });
$("#class-edit-button").addEventListener("click", () => goTo({ id: state.current.id, edit: "1" }));
$("#class-start").addEventListener("click", startRoom);
$("#class-csv").addEventListener("click", () => downloadCSV());
$("#class-delete").addEventListener("click", deleteClass);
$("#class-conflict-load").addEventListener("click", () => { const current = state.conflict; state.conflict = null; startEditing(current); });
$("#class-conflict-keep").addEventListener("click", () => { const current = state.conflict; state.conflict = null; save(current.version); });
window.addEventListener("hashchange", () => route());

nameListHeading($("#class-list-title"), "classes", api);
if (!api.signedIn) {
  show("class-list");
  $("#class-new").hidden = true;
  offerSignIn($("#class-list-status"), `/classes${location.hash}`);
} else if (offerAdminScreen($("#class-list-status"), api, "classes-admin-link")) {
  show("class-list");
  $("#class-new").hidden = true;
  $("#library-link").hidden = true;
  showAccountBar(api);
} else {
  showAccountBar(api);
  route();
}
