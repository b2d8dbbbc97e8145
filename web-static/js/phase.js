// One sentence for where the room is, for teachers and dashboards. A failure's reason reaches teachers
// only (`phaseDetail`, shown as the server wrote it); the projector gets kind words instead.

import { t } from "./i18n.js";

export function describePhase(room) {
  const players = room.players.length;
  const where = room.question ? { number: room.question.index + 1, count: room.question.count } : null;
  let text;
  switch (room.phase) {
    case "lobby": text = t("phase.lobby", { count: players }); break;
    case "preparing": text = t("phase.preparing"); break;
    case "error": text = room.role === "teacher" ? t("phase.error_teacher") : t("phase.error_screen"); break;
    case "narrating": text = t("phase.narrating"); break;
    case "question": text = where ? t("phase.question", where) : t("phase.question_any"); break;
    case "reveal": text = where ? t("phase.reveal", where) : t("phase.question_any"); break;
    case "finished": text = t("phase.finished"); break;
    default: text = room.phase;
  }
  if (room.paused) text = t("phase.paused", { phase: text });
  if (room.locked) text = t("phase.locked", { phase: text });
  return text;
}

/** What went wrong, for the teacher: the server's own words about a failure (a voice's name, say). */
export function phaseDetail(room) {
  return room.role === "teacher" && room.phase === "error" ? room.error ?? "" : "";
}
