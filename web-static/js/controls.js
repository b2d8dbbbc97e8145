// The teacher's controls: one button per command, shown only when the server lists it as allowed now
// (`commands`, kept by room-store.js). Of those, the one the room expects now (`nextStep`) is the one
// filled button, with a line saying what it does; the others are plain; skipping and ending stand apart
// and ask first. Two pairs do the same thing, so only one of each is shown: during a question "Next"
// reveals (as "Reveal answer" does), and at a reveal "Skip" goes on (as "Next" does). A live
// roster (here or away, answered yet, score, streak, answers so far) with "Remove" and "Remove and
// block"; the room settings (before the story starts, or after a failure) and the projector's answer
// grid (any time); at the end, the results. Ending the room and removing a child ask first.

import { el, clear, announce, progressDots, streakText, written } from "./dom.js";
import { avatarPicture } from "./avatars.js";
import { t, tParts, number, isolate, LANGUAGES } from "./i18n.js";
import { errorText } from "./error-codes.js";
import { ApiClient, saveFile } from "./api.js";

const BUTTONS = [
  ["start", "▶", "controls.start"], ["pause", "⏸", "controls.pause"], ["resume", "▶", "controls.resume"], ["replay", "↺", "controls.replay"],
  ["retry", "↻", "controls.retry"], ["skip", "⏭", "controls.skip"], ["reveal", "👁", "controls.reveal"], ["next", "→", "controls.next"],
  ["lock", "🔒", "controls.lock"], ["unlock", "🔓", "controls.unlock"], ["end", "■", "controls.end"],
];

/** The commands that throw something away (the rest of the story, a question, the room): set apart, asked first. */
const APART = new Set(["skip", "end"]);

/** The command the room expects now, and the line that says what it does. */
export function nextStep(room) {
  const lastQuestion = room.question && room.question.index + 1 >= room.question.count;
  if (room.paused) return { command: "resume", key: room.phase === "question" ? "controls.now_paused_question" : "controls.now_paused_story" };
  switch (room.phase) {
    case "lobby": return { command: "start", key: "controls.now_lobby" };
    case "preparing": return { command: null, key: "controls.now_preparing" };
    case "error": return { command: "retry", key: "controls.now_error" };
    case "narrating": return { command: "pause", key: "controls.now_narrating" };
    case "question": return { command: "reveal", key: "controls.now_question" };
    case "reveal": return { command: "next", key: lastQuestion ? "controls.now_reveal_last" : "controls.now_reveal" };
    case "finished": return { command: null, key: "controls.now_finished" };
    default: return { command: null, key: "" };
  }
}

/** Whether the page shows `command` now: allowed, and not the twin of another button shown. */
function offered(command, room, allowed) {
  if (!allowed.has(command)) return false;
  if (command === "next" && room.phase === "question") return false;
  if (command === "skip" && room.phase === "reveal") return false;
  return true;
}

const BUTTON_ORDER = BUTTONS.map(([command]) => command);

/** The words of the commands sent from elsewhere than a button of the controls, for the announcement. */
const UNBUTTONED = { settings: "settings.save", kick: "roster.remove", block: "roster.block" };

/** Icons that point the way reading goes: mirrored right to left. */
const MIRRORED = new Set(["next", "skip"]);

function skipLabel(phase) {
  if (["preparing", "error", "narrating"].includes(phase)) return "controls.skip_story";
  if (phase === "question") return "controls.skip_question";
  if (phase === "reveal") return "controls.skip_reveal";
  return "controls.skip";
}

/** An element whose words are the catalog's `key` (and are worded again when the language changes). */
function worded(tag, key, attributes = {}, ...children) {
  return el(tag, { ...attributes, "data-i18n": key, text: t(key) }, ...children);
}

/**
 * Asks before something that cannot be undone; resolves to true when the teacher confirms. `signal`: aborted
 * when the question no longer fits (the room moved on meanwhile), which closes the dialog as a "no".
 */
export function confirmDialog({ title, body, confirm, cancel = t("controls.cancel"), danger = true, signal }) {
  return new Promise((resolve) => {
    const dialog = el("dialog", { class: "confirm", "aria-labelledby": "confirm-title" },
      el("h2", { id: "confirm-title", text: title }),
      el("p", { text: body }),
      el("div", { class: "actions" },
        el("button", { type: "button", class: "quiet", "data-answer": "no", text: cancel }),
        el("button", { type: "button", class: danger ? "danger" : "", "data-answer": "yes", text: confirm })));
    const finish = (answer) => {
      if (!dialog.isConnected) return;
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    signal?.addEventListener("abort", () => finish(false), { once: true });
    dialog.addEventListener("cancel", (event) => { event.preventDefault(); finish(false); });
    dialog.querySelector('[data-answer="no"]').addEventListener("click", () => finish(false));
    dialog.querySelector('[data-answer="yes"]').addEventListener("click", () => finish(true));
    document.body.append(dialog);
    dialog.showModal();
    dialog.querySelector('[data-answer="no"]').focus();
  });
}

export class TeacherControls {
  /**
   * @param send sends a message to the room
   * @param room, token: for the results (the teacher token reads them over HTTP)
   */
  /**
   * `rosterHost`: where the roster goes (the teacher page's own card); beside the controls without one.
   * `chart`: the answer chart shown at a reveal, put just under the next step: on a laptop the one button
   * the room expects stays in view above it, and on a tablet or phone it comes first.
   */
  constructor(container, send, { room, token, rosterHost = null, chart = null }) {
    this.send = send;
    this.code = room;
    this.token = token;
    this.buttons = new Map();
    this.lastPlayers = "";
    this.room = null;
    this.feedbackWords = () => "";
    const grid = el("div", { class: "controls", role: "group", "aria-label": t("controls.group"), "data-i18n-aria-label": "controls.group" });
    const apart = el("div", { class: "controls controls-apart", role: "group", "aria-labelledby": "controls-apart-title" });
    this.nextLine = el("p", { class: "next-step", id: "next-step" });
    this.nextBox = el("div", { class: "next-step-box", id: "next-step-box" });
    for (const [command, icon, label] of BUTTONS) {
      const button = el("button", { type: "button", "data-command": command, class: APART.has(command) ? "apart" : "secondary",
        onclick: () => this.command(command) },
        el("span", { "aria-hidden": "true", class: MIRRORED.has(command) ? "mirror" : undefined, text: icon }), worded("span", label, { class: "label" }));
      this.buttons.set(command, button);
      (APART.has(command) ? apart : grid).append(button);
    }
    this.grid = grid;
    this.apart = el("div", { class: "apart-box", id: "controls-apart" },
      worded("h3", "controls.apart", { id: "controls-apart-title" }), apart);
    // Refusals and the results' download: said here. A command sent is only announced.
    this.feedback = el("p", { class: "muted", role: "status", id: "control-feedback" });
    this.results = this.buildResults();
    this.roster = el("table", { class: "players-table", id: "roster" },
      worded("caption", "roster.caption", { class: "visually-hidden" }),
      el("thead", {}, el("tr", {},
        ...["roster.name", "roster.here", "roster.answered", "roster.score", "roster.answers", "roster.remove_or_block"].map((heading, i) => worded("th", heading, { scope: "col", class: i === 3 ? "num" : "" })))),
      el("tbody"));
    this.rosterHeading = el("h2", { id: "roster-heading" });
    this.settingsForm = this.buildSettings();
    this.gridToggle = el("input", { type: "checkbox", id: "answer-grid", name: "answerGrid",
      onchange: () => this.send({ type: "command", command: "settings", settings: { answerGrid: this.gridToggle.checked } }) });
    this.competitiveToggle = el("input", { type: "checkbox", id: "competitive", name: "competitive",
      onchange: () => this.send({ type: "command", command: "settings", settings: { competitive: this.competitiveToggle.checked } }) });
    this.languageSelect = el("select", { id: "room-language", name: "language",
      onchange: () => this.send({ type: "command", command: "settings", settings: { language: this.languageSelect.value } }) },
    el("option", { value: "", id: "follow-voice" }),
    ...Object.entries(LANGUAGES).map(([code, { name, dir }]) => el("option", { value: code, lang: code, dir, text: name })));
    // With a card of its own the roster keeps every line for children: what Remove and Block do is said
    // under the controls instead.
    const note = worded("p", "controls.roster_note", { class: "muted roster-note", id: "roster-note" });
    this.rosterNote = note;
    const roster = el("div", { class: "teacher-roster" },
      this.rosterHeading,
      rosterHost ? null : note,
      el("div", { class: "table-scroll", id: "roster-scroll" }, this.roster));
    container.append(el("div", { class: `teacher-grid${rosterHost ? " alone" : ""}` },
      el("div", { class: "teacher-controls" },
        this.results,
        worded("h2", "controls.now", { id: "next-step-title" }), this.nextLine, this.nextBox, chart, grid, this.apart,
        this.feedback, rosterHost ? note : null,
        worded("h2", "controls.projector"),
        el("label", { class: "check", for: "answer-grid" }, this.gridToggle, worded("span", "controls.grid_toggle")),
        worded("p", "controls.grid_note", { class: "muted" }),
        worded("h2", "controls.phones"),
        el("label", { class: "check", for: "competitive" }, this.competitiveToggle, worded("span", "controls.competitive_toggle")),
        worded("p", "controls.competitive_note", { class: "muted" }),
        worded("label", "language.room_label", { for: "room-language" }), this.languageSelect,
        worded("p", "controls.language_note", { class: "muted" }),
        worded("h2", "controls.settings"), this.settingsForm),
      rosterHost ? null : roster));
    // A class room: every child of the class, here or missing, with "Release name" on a taken one.
    this.classHeading = el("h2", { id: "class-heading" });
    this.classMembers = el("ul", { class: "class-members", id: "class-members", "aria-labelledby": "class-heading" });
    this.classBox = el("div", { class: "class-roster", id: "class-roster", hidden: true },
      this.classHeading, worded("p", "members.note", { class: "muted" }), this.classMembers);
    this.lastMembers = "";
    roster.append(this.classBox);
    rosterHost?.append(roster);
  }

  /** Words again what the catalog attributes do not cover (the language changed). */
  reword() {
    this.lastPlayers = "";
    this.lastMembers = "";
    this.feedback.textContent = this.feedbackWords();
    if (this.room) this.update(this.room);
  }

  say(words) {
    this.feedbackWords = words;
    this.feedback.textContent = words();
  }

  async command(command, extra = {}) {
    if (command === "end") {
      const sure = await confirmDialog({
        title: t("controls.end_title"), body: t("controls.end_body"),
        confirm: t("controls.end_confirm"), cancel: t("controls.end_cancel"),
      });
      if (!sure) return;
    }
    if (command === "skip") {
      const question = this.room?.phase === "question";
      // "Skip the rest of the story?" asked while the story is read: once it has ended by itself (or the
      // question it asked about is over), a yes would skip the next thing instead. The dialog goes.
      this.skipAsked = { phase: this.room?.phase, question: this.room?.question?.index ?? null, stale: new AbortController() };
      const signal = this.skipAsked.stale.signal;
      const sure = await confirmDialog(question
        ? { title: t("controls.skip_question_title"), body: t("controls.skip_question_body"), confirm: t("controls.skip_question"), cancel: t("controls.skip_cancel"), signal }
        : { title: t("controls.skip_story_title"), body: t("controls.skip_story_body"), confirm: t("controls.skip_story"), cancel: t("controls.skip_cancel"), signal });
      this.skipAsked = null;
      if (!sure) return;
    }
    this.send({ type: "command", command, ...extra });
    const button = this.buttons.get(command);
    const label = button ? button.querySelector(".label").textContent : t(UNBUTTONED[command] ?? "controls.group");
    // Said to a screen reader, not written under the buttons: what changed shows in the room's state.
    announce(t("controls.sent", { command: label }));
  }

  async remove(player, block) {
    const name = isolate(player.nickname);
    const sure = await confirmDialog(block
      ? { title: t("controls.block_title", { name }), body: t("controls.block_body", { name }), confirm: t("controls.block_confirm") }
      : { title: t("controls.remove_title", { name }), body: t("controls.remove_body", { name }), confirm: t("controls.remove_confirm") });
    if (sure) this.command(block ? "block" : "kick", { player: player.id });
  }

  /** Shows a refusal from the server next to the controls. */
  refused(error) {
    this.say(() => errorText(error));
    announce(errorText(error));
  }

  update(room) {
    this.room = room;
    const asked = this.skipAsked;
    if (asked && (room.phase !== asked.phase || (room.question?.index ?? null) !== asked.question)) asked.stale.abort();
    const allowed = new Set(room.commands);
    const step = nextStep(room);
    const focused = [...this.buttons.values()].find((button) => button === document.activeElement);
    for (const [command, button] of this.buttons) {
      const shown = offered(command, room, allowed);
      button.disabled = !allowed.has(command);
      button.hidden = !shown;
      if (command === "skip") {
        const label = button.querySelector(".label");
        label.dataset.i18n = skipLabel(room.phase);
        label.textContent = t(label.dataset.i18n);
      }
      if (APART.has(command)) continue;
      const primary = shown && command === step.command;
      button.classList.toggle("secondary", !primary);
      button.classList.toggle("primary", primary);
      const home = primary ? this.nextBox : this.grid;
      if (button.parentElement !== home) {
        const focused = document.activeElement === button;
        if (primary) home.append(button);
        else home.insertBefore(button, [...home.children].find((other) => BUTTON_ORDER.indexOf(other.dataset.command) > BUTTON_ORDER.indexOf(command)) ?? null);
        if (focused) button.focus();
      }
    }
    // A keyboard user whose button went away (pressed, the room moved on) lands on the next step.
    if (focused?.hidden) this.buttons.get(step.command)?.focus();
    this.nextLine.textContent = step.key ? t(step.key) : "";
    this.apart.hidden = ![...APART].some((command) => !this.buttons.get(command).hidden);
    this.grid.hidden = ![...this.grid.children].some((button) => !button.hidden);
    const finished = room.phase === "finished";
    this.openResults.href = this.resultsLink(room.language);
    const appearing = finished && this.results.hidden;
    this.results.hidden = !finished;
    if (appearing) this.results.scrollIntoView({ block: "nearest" });
    this.renderRoster(room);
    this.renderClass(room);
    const editable = allowed.has("settings");
    for (const input of this.settingsForm.querySelectorAll("input, select, button")) input.disabled = !editable;
    if (!this.settingsForm.contains(document.activeElement)) this.fillSettings(room.settings);
    this.gridToggle.checked = Boolean(room.settings.answerGrid);
    this.competitiveToggle.checked = Boolean(room.settings.competitive);
    const voiceLanguage = LANGUAGES[room.settings.language ? "" : room.language]?.name;
    this.languageSelect.querySelector("#follow-voice").textContent = voiceLanguage ? `${t("language.follow_voice")} (${voiceLanguage})` : t("language.follow_voice");
    if (document.activeElement !== this.languageSelect) this.languageSelect.value = room.settings.language ?? "";
  }

  renderRoster(room) {
    const questionOpen = room.phase === "question";
    const canKick = room.commands.includes("kick");
    const canBlock = room.commands.includes("block");
    const canFix = room.commands.includes("release");
    // In a class room, the name each child holds: a wrong tap is fixed by freeing it (one action), not by a removal.
    const held = new Map((room.classRoom?.members ?? []).filter((member) => member.taken && member.player).map((member) => [member.player, member]));
    // A finished room has nothing left to fix or remove: the roster keeps only what each child did.
    const finished = room.phase === "finished";
    this.rosterNote.hidden = finished;
    const key = JSON.stringify([room.players, questionOpen, room.questionCount, canKick, canBlock, canFix, [...held], finished]);
    if (key === this.lastPlayers) return;
    this.lastPlayers = key;
    const actionsHeading = this.roster.querySelector("thead th:last-child");
    actionsHeading.hidden = finished;
    actionsHeading.dataset.i18n = room.classRoom ? "roster.fix_or_remove" : "roster.remove_or_block";
    actionsHeading.textContent = t(actionsHeading.dataset.i18n);
    const count = el("span", { id: "roster-count", class: "num", "data-count": room.players.length, text: number(room.players.length) });
    this.rosterHeading.replaceChildren(...tParts("controls.children", { count }));
    const rows = clear(this.roster.querySelector("tbody"));
    if (room.players.length === 0) rows.append(el("tr", {}, el("td", { colspan: finished ? 5 : 6, class: "muted", text: t("roster.nobody") })));
    const focused = document.activeElement?.dataset?.player;
    for (const player of room.players) {
      const answered = !questionOpen ? el("span", { class: "muted", text: t("roster.not_asking") })
        : player.answered ? el("span", { class: "state-answered", text: t("roster.has_answered") })
          : el("span", { class: "state-waiting", text: t("roster.not_yet") });
      // Labels are read out, never laid out: the name goes in as it is.
      const name = player.nickname;
      rows.append(el("tr", { "data-player": player.id },
        el("td", { class: "name" }, el("span", { class: "name-text", title: player.nickname, tabindex: "0" }, written(player.nickname))),
        el("td", { text: player.connected ? t("roster.present") : t("roster.away") }),
        el("td", { class: "answered" }, answered),
        el("td", { class: "num score" }, number(player.score), player.streak >= 2 ? el("span", { class: "streak-mark", title: streakText(player.streak), text: ` 🔥${number(player.streak)}` }) : null),
        el("td", {}, progressDots(player.results ?? [], Math.max(room.questionCount, (player.results ?? []).length), t("dots.of", { name }))),
        finished ? null : el("td", {}, el("div", { class: "actions" },
          held.has(player.id) ? el("button", { type: "button", class: "secondary", "data-player": player.id, "data-action": "fix-name",
            text: t("roster.fix_name"), "aria-label": t("roster.fix_name_label", { name }), disabled: !canFix,
            onclick: () => this.release(held.get(player.id)) }) : null,
          // Removals are for real trouble, set apart from the fix of a mix-up and quieter than it (drawn
          // plain, never filled: each asks first).
          el("span", { class: "removals" },
            el("button", { type: "button", class: "removal", "data-player": player.id, "data-action": "kick", text: t("roster.remove"),
              "aria-label": t("roster.remove_label", { name }), disabled: !canKick, onclick: () => this.remove(player, false) }),
            el("button", { type: "button", class: "removal", "data-player": player.id, "data-action": "block", text: t("roster.block"),
              "aria-label": t("roster.block_label", { name }), disabled: !canBlock, onclick: () => this.remove(player, true) }))))));
    }
    if (focused) rows.querySelector(`[data-player="${CSS.escape(focused)}"]`)?.focus();
  }

  renderClass(room) {
    const classRoom = room.classRoom;
    this.classBox.hidden = !classRoom;
    if (!classRoom) return;
    const key = JSON.stringify(classRoom);
    if (key === this.lastMembers) return;
    this.lastMembers = key;
    const members = classRoom.members ?? [];
    const here = members.filter((member) => member.connected).length;
    this.classHeading.textContent = t("members.heading", { class: isolate(classRoom.name), here, count: members.length });
    const list = clear(this.classMembers);
    // Who is here, at a glance; a name to fix is fixed from the roster's row (one action for it).
    for (const member of members) {
      const state = member.connected ? "members.here" : member.taken ? "members.away" : "members.missing";
      list.append(el("li", { class: `class-member${member.taken ? "" : " missing"}`, "data-member-row": member.member },
        avatarPicture(member.avatar, member.name, "avatar member-avatar"),
        el("span", { class: "member-text" }, written(member.name, "strong"), el("span", { class: "member-state", text: t(state) }))));
    }
  }

  /**
   * "Fix name": frees a class child's name (a wrong tap, or a child on a new device), after asking. The phone
   * holding it goes back to the names, kindly worded; the right child taps the name, with any points won on it.
   */
  async release(member) {
    const name = isolate(member.name);
    const sure = await confirmDialog({ title: t("roster.fix_title", { name }), body: t("roster.fix_body", { name }),
      confirm: t("roster.fix_confirm"), danger: false });
    if (!sure) return;
    this.send({ type: "command", command: "release", member: member.member });
    this.say(() => t("roster.fix_sent", { name }));
  }

  buildResults() {
    const download = el("button", { type: "button", id: "download-results", onclick: () => this.download() },
      el("span", { "aria-hidden": "true", text: "⬇" }), worded("span", "results.download"));
    this.openResults = el("a", { class: "button secondary", id: "open-results", href: this.resultsLink(), target: "_blank", rel: "noopener" },
      el("span", { "aria-hidden": "true", text: "📊" }), worded("span", "results.open"));
    return el("section", { class: "card results-box", id: "end-results", hidden: true, "aria-labelledby": "results-title" },
      worded("h2", "results.title", { id: "results-title" }),
      worded("p", "results.kept"),
      el("div", { class: "results-actions" }, download, this.openResults));
  }

  /** The results page, in the room's language. */
  resultsLink(language = null) {
    const lang = language ? `&lang=${encodeURIComponent(language)}` : "";
    return `/results.html#room=${encodeURIComponent(this.code)}&token=${encodeURIComponent(this.token)}${lang}`;
  }

  /** The CSV comes with the teacher's token, so it is fetched and handed to the browser as a file. */
  async download() {
    try {
      saveFile(await new ApiClient(this.token).file(`/api/rooms/${encodeURIComponent(this.code)}/results?format=csv`, `storycircle-${this.code}.csv`));
      this.say(() => t("results.downloaded"));
    } catch {
      this.say(() => t("results.download_failed"));
    }
  }

  buildSettings() {
    const form = el("form", { class: "settings-grid", "aria-label": t("settings.form"), "data-i18n-aria-label": "settings.form" });
    const check = (name, label) => el("label", { class: "check" }, el("input", { type: "checkbox", name }), worded("span", label));
    form.append(
      check("speedPoints", "settings.speed_points"), check("streakBonus", "settings.streak_bonus"), check("timer", "settings.timer"),
      check("lateJoin", "settings.late_join"), check("readQuestions", "settings.read_questions"),
      el("label", {}, worded("span", "settings.question_seconds"), el("input", { type: "number", name: "questionSeconds", min: 5, max: 300 })),
      el("label", { class: "whole-row" }, worded("span", "settings.narration"), el("select", { name: "narration" },
        worded("option", "settings.narration_devices", { value: "devices" }),
        worded("option", "settings.narration_dashboard", { value: "dashboard" }),
        worded("option", "settings.narration_off", { value: "off" }))),
      el("label", { class: "whole-row" }, worded("span", "settings.voice"), el("input", { type: "text", name: "voice", maxlength: 40, dir: "ltr" })),
      worded("button", "settings.save", { type: "submit", class: "secondary" }),
      worded("p", "settings.note", { class: "muted" }),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const value = (name) => form.elements[name];
      this.command("settings", { settings: {
        speedPoints: value("speedPoints").checked, streakBonus: value("streakBonus").checked, timer: value("timer").checked,
        lateJoin: value("lateJoin").checked, readQuestions: value("readQuestions").checked,
        questionSeconds: Number(value("questionSeconds").value), narration: value("narration").value, voice: value("voice").value.trim(),
      } });
    });
    return form;
  }

  fillSettings(settings) {
    const form = this.settingsForm;
    for (const name of ["speedPoints", "streakBonus", "timer", "lateJoin", "readQuestions"]) form.elements[name].checked = Boolean(settings[name]);
    form.elements.questionSeconds.value = settings.questionSeconds ?? 20;
    form.elements.narration.value = settings.narration ?? "devices";
    form.elements.voice.value = settings.voice ?? "";
  }
}
