// The teacher's controls: one button per command, enabled only when the server lists it as allowed now
// (`commands`, kept by room-store.js: the page has no rules of its own); a live
// roster (here or away, answered yet, score, streak, answers so far) with "Remove" and "Remove and
// block"; the room settings (before the story starts, or after a failure) and the projector's answer
// grid (any time); at the end, the results. Ending the room and removing a child ask first.

import { el, clear, announce, progressDots, streakText } from "./dom.js";

const BUTTONS = [
  ["start", "▶", "Start story"], ["pause", "⏸", "Pause"], ["resume", "▶", "Resume"], ["replay", "↺", "Replay story"],
  ["retry", "↻", "Try again"], ["skip", "⏭", "Skip"], ["reveal", "👁", "Reveal answer"], ["next", "→", "Next"],
  ["lock", "🔒", "Lock room"], ["unlock", "🔓", "Unlock room"], ["end", "■", "End room"],
];

function skipLabel(phase) {
  if (["preparing", "error", "narrating"].includes(phase)) return "Skip to the quiz";
  if (phase === "question") return "Skip question";
  if (phase === "reveal") return "Skip to the next";
  return "Skip";
}

/** Asks before something that cannot be undone; resolves to true when the teacher confirms. */
export function confirmDialog({ title, body, confirm, cancel = "Cancel", danger = true }) {
  return new Promise((resolve) => {
    const dialog = el("dialog", { class: "confirm", "aria-labelledby": "confirm-title" },
      el("h2", { id: "confirm-title", text: title }),
      el("p", { text: body }),
      el("div", { class: "actions" },
        el("button", { type: "button", class: "quiet", "data-answer": "no", text: cancel }),
        el("button", { type: "button", class: danger ? "danger" : "", "data-answer": "yes", text: confirm })));
    const finish = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
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
  constructor(container, send, { room, token }) {
    this.send = send;
    this.code = room;
    this.token = token;
    this.buttons = new Map();
    this.lastPlayers = "";
    const grid = el("div", { class: "controls", role: "group", "aria-label": "Room controls" });
    for (const [command, icon, label] of BUTTONS) {
      const button = el("button", { type: "button", "data-command": command, class: command === "end" ? "danger" : "",
        onclick: () => this.command(command) },
        el("span", { "aria-hidden": "true", text: icon }), el("span", { class: "label", text: label }));
      this.buttons.set(command, button);
      grid.append(button);
    }
    this.feedback = el("p", { class: "muted", role: "status", id: "control-feedback" });
    this.results = this.buildResults();
    this.roster = el("table", { class: "players-table", id: "roster" },
      el("caption", { class: "visually-hidden", text: "Children in the room" }),
      el("thead", {}, el("tr", {},
        ...["Name", "Here?", "Answered?", "Score", "Answers so far", "Remove or block"].map((heading, i) => el("th", { scope: "col", class: i === 3 ? "num" : "", text: heading })))),
      el("tbody"));
    this.rosterCount = el("span", { id: "roster-count" });
    this.settingsForm = this.buildSettings();
    this.gridToggle = el("input", { type: "checkbox", id: "answer-grid", name: "answerGrid",
      onchange: () => this.send({ type: "command", command: "settings", settings: { answerGrid: this.gridToggle.checked } }) });
    container.append(el("div", { class: "teacher-grid" },
      el("div", { class: "teacher-controls" },
        this.results,
        el("h2", { text: "Controls" }), grid, this.feedback,
        el("h2", { text: "The projector" }),
        el("label", { class: "check", for: "answer-grid" }, this.gridToggle, "Show everyone’s answers by name (the answer grid)"),
        el("p", { class: "muted", text: "Off by default, so nobody’s wrong answers are shown to the class. You can change it at any time." }),
        el("h2", { text: "Settings" }), this.settingsForm),
      el("div", { class: "teacher-roster" },
        el("h2", {}, "Children ", el("span", { class: "muted" }, "(", this.rosterCount, ")")),
        el("p", { class: "muted", text: "Remove: the child leaves and may join again. Block: the child leaves and cannot come back, not under that name and not from that browser." }),
        el("div", { class: "table-scroll" }, this.roster))));
  }

  async command(command, extra = {}) {
    if (command === "end") {
      const sure = await confirmDialog({
        title: "End the room for everyone?",
        body: "Everyone goes to the podium now. A question that is still open is not scored.",
        confirm: "End the room", cancel: "Keep playing",
      });
      if (!sure) return;
    }
    this.send({ type: "command", command, ...extra });
    this.feedback.textContent = `Sent: ${command}`;
  }

  async remove(player, block) {
    const sure = await confirmDialog(block
      ? { title: `Remove and block ${player.nickname}?`, body: `${player.nickname} leaves the room and cannot come back: not under this name, and not from this browser.`, confirm: "Remove and block" }
      : { title: `Remove ${player.nickname}?`, body: `${player.nickname} leaves the room, and can join again.`, confirm: "Remove" });
    if (sure) this.command(block ? "block" : "kick", { player: player.id });
  }

  /** Shows a refusal from the server next to the controls. */
  refused(error) {
    this.feedback.textContent = error.message;
    announce(error.message);
  }

  update(room) {
    const allowed = new Set(room.commands);
    for (const [command, button] of this.buttons) {
      button.disabled = !allowed.has(command);
      if (command === "skip") button.querySelector(".label").textContent = skipLabel(room.phase);
    }
    const finished = room.phase === "finished";
    const appearing = finished && this.results.hidden;
    this.results.hidden = !finished;
    if (appearing) this.results.scrollIntoView({ block: "nearest" });
    this.renderRoster(room);
    const editable = allowed.has("settings");
    for (const input of this.settingsForm.querySelectorAll("input, select, button")) input.disabled = !editable;
    if (!this.settingsForm.contains(document.activeElement)) this.fillSettings(room.settings);
    this.gridToggle.checked = Boolean(room.settings.answerGrid);
  }

  renderRoster(room) {
    const questionOpen = room.phase === "question";
    const canKick = room.commands.includes("kick");
    const canBlock = room.commands.includes("block");
    const key = JSON.stringify([room.players, questionOpen, room.questionCount, canKick, canBlock]);
    if (key === this.lastPlayers) return;
    this.lastPlayers = key;
    this.rosterCount.textContent = `${room.players.length}`;
    const rows = clear(this.roster.querySelector("tbody"));
    if (room.players.length === 0) rows.append(el("tr", {}, el("td", { colspan: 6, class: "muted", text: "Nobody has joined yet." })));
    const focused = document.activeElement?.dataset?.player;
    for (const player of room.players) {
      const answered = !questionOpen ? el("span", { class: "muted", text: "—" })
        : player.answered ? el("span", { class: "state-answered", text: "✓ answered" })
          : el("span", { class: "state-waiting", text: "… not yet" });
      rows.append(el("tr", { "data-player": player.id },
        el("td", { class: "name", text: player.nickname }),
        el("td", { text: player.connected ? "● here" : "○ away" }),
        el("td", { class: "answered" }, answered),
        el("td", { class: "num score" }, `${player.score}`, player.streak >= 2 ? el("span", { class: "streak-mark", title: streakText(player.streak), text: ` 🔥${player.streak}` }) : null),
        el("td", {}, progressDots(player.results ?? [], Math.max(room.questionCount, (player.results ?? []).length), `${player.nickname}’s answers`)),
        el("td", {}, el("div", { class: "actions" },
          el("button", { type: "button", class: "secondary", "data-player": player.id, "data-action": "kick", text: "Remove",
            "aria-label": `Remove ${player.nickname}`, disabled: !canKick, onclick: () => this.remove(player, false) }),
          el("button", { type: "button", class: "danger", "data-player": player.id, "data-action": "block", text: "Block",
            "aria-label": `Remove and block ${player.nickname}`, disabled: !canBlock, onclick: () => this.remove(player, true) })))));
    }
    if (focused) rows.querySelector(`[data-player="${CSS.escape(focused)}"]`)?.focus();
  }

  buildResults() {
    const download = el("button", { type: "button", id: "download-results", onclick: () => this.download() },
      el("span", { "aria-hidden": "true", text: "⬇" }), "Download results (CSV)");
    const open = el("a", { class: "button secondary", id: "open-results", href: `/results.html#room=${encodeURIComponent(this.code)}&token=${encodeURIComponent(this.token)}`, target: "_blank", rel: "noopener" },
      el("span", { "aria-hidden": "true", text: "📊" }), "Open results");
    return el("section", { class: "card results-box", id: "end-results", hidden: true, "aria-labelledby": "results-title" },
      el("h2", { id: "results-title", text: "Results" }),
      el("p", { text: "The room has finished. Every child’s answers and points are kept here:" }),
      el("div", { class: "results-actions" }, download, open));
  }

  /** The CSV comes with the teacher's token, so it is fetched and handed to the browser as a file. */
  async download() {
    try {
      const response = await fetch(`/api/rooms/${encodeURIComponent(this.code)}/results?format=csv`, { headers: { Authorization: `Bearer ${this.token}` } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const url = URL.createObjectURL(await response.blob());
      const link = el("a", { href: url, download: `storycircle-${this.code}.csv`, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      this.feedback.textContent = "Results downloaded.";
    } catch {
      this.feedback.textContent = "The results could not be downloaded just now. Try again in a moment.";
    }
  }

  buildSettings() {
    const form = el("form", { class: "settings-grid", "aria-label": "Room settings" });
    const check = (name, label) => el("label", { class: "check" }, el("input", { type: "checkbox", name }), label);
    form.append(
      check("speedPoints", "Speed points"), check("streakBonus", "Streak bonus"), check("timer", "Timer"),
      check("lateJoin", "Late joining"), check("readQuestions", "Read questions aloud"),
      el("label", {}, "Seconds per question", el("input", { type: "number", name: "questionSeconds", min: 5, max: 300 })),
      el("label", {}, "Narration plays on", el("select", { name: "narration" },
        el("option", { value: "devices", text: "every child’s device" }),
        el("option", { value: "dashboard", text: "the dashboard (projector)" }),
        el("option", { value: "off", text: "nowhere (read silently)" }))),
      el("label", {}, "Voice (espeak-ng, empty for the story’s)", el("input", { type: "text", name: "voice", maxlength: 40 })),
      el("button", { type: "submit", text: "Save settings" }),
      el("p", { class: "muted", text: "These change before the story starts (or after the narration failed)." }),
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
