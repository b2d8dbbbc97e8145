// The teacher's controls: one button per command, enabled only when the command makes sense now; the
// player list with kick buttons; the room settings (before the story starts, or after a failure).

import { $, el, clear, announce } from "./dom.js";

const BUTTONS = [
  ["start", "▶ Start story"], ["pause", "⏸ Pause"], ["resume", "⏵ Resume"], ["replay", "↺ Replay story"],
  ["retry", "⟳ Try again"], ["skip", "⏭ Skip"], ["reveal", "👁 Reveal answer"], ["next", "→ Next"],
  ["lock", "🔒 Lock room"], ["unlock", "🔓 Unlock room"], ["end", "■ End room"],
];

function allowed(command, room) {
  const { phase, paused, locked } = room;
  switch (command) {
    case "start": return phase === "lobby";
    case "pause": return (phase === "narrating" || phase === "question") && !paused;
    case "resume": return paused;
    case "replay": return phase === "narrating";
    case "retry": return phase === "error";
    case "skip": return ["preparing", "error", "narrating", "question", "reveal"].includes(phase);
    case "reveal": return phase === "question";
    case "next": return phase === "reveal" || phase === "question";
    case "lock": return !locked && phase !== "finished";
    case "unlock": return locked && phase !== "finished";
    case "end": return phase !== "finished";
    default: return false;
  }
}

export class TeacherControls {
  constructor(container, send) {
    this.send = send;
    this.buttons = new Map();
    const grid = el("div", { class: "controls", role: "group", "aria-label": "Room controls" });
    for (const [command, label] of BUTTONS) {
      const button = el("button", { type: "button", "data-command": command, class: command === "end" ? "danger" : "", text: label,
        onclick: () => this.command(command) });
      this.buttons.set(command, button);
      grid.append(button);
    }
    this.feedback = el("p", { class: "muted", role: "status", id: "control-feedback" });
    this.players = el("table", { class: "players-table", "aria-label": "Players" });
    this.settingsForm = this.buildSettings();
    container.append(
      el("h2", { text: "Controls" }), grid, this.feedback,
      el("h2", { text: "Players" }), this.players,
      el("h2", { text: "Settings" }), this.settingsForm,
    );
  }

  command(command, extra = {}) {
    if (command === "end" && !window.confirm("End the room now and show the podium?")) return;
    this.send({ type: "command", command, ...extra });
    this.feedback.textContent = `Sent: ${command}`;
  }

  /** Shows a refusal from the server next to the controls. */
  refused(error) {
    this.feedback.textContent = error.message;
    announce(error.message);
  }

  update(room) {
    for (const [command, button] of this.buttons) button.disabled = !allowed(command, room);
    const rows = clear(this.players);
    if (room.players.length === 0) rows.append(el("tr", {}, el("td", { class: "muted", text: "Nobody has joined yet." })));
    for (const player of room.players) {
      rows.append(el("tr", {},
        el("td", { text: player.nickname }),
        el("td", { class: "muted", text: player.connected ? "here" : "away" }),
        el("td", {}, el("button", { type: "button", class: "secondary", "aria-label": `Remove ${player.nickname}`, text: "Remove",
          onclick: () => {
            if (window.confirm(`Remove ${player.nickname} from the room?`)) this.command("kick", { player: player.id });
          } }))));
    }
    const editable = room.phase === "lobby" || room.phase === "error";
    for (const input of this.settingsForm.querySelectorAll("input, select, button")) input.disabled = !editable;
    if (!this.settingsForm.contains(document.activeElement)) this.fillSettings(room.settings);
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
