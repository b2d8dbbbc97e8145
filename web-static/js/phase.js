// One sentence for where the room is, for teachers and dashboards. A failure's reason reaches teachers
// only (`phaseDetail`, worded from its code); the projector gets kind words instead.

import { t, isolate } from "./i18n.js";

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

// The words of each reason a narration fails for (docs/protocol.md, "Error codes"), written out so the
// catalog test sees every key in use.
const NARRATION_REASONS = {
  voice_not_installed: "narration.reason.voice_not_installed",
  engine_unavailable: "narration.reason.engine_unavailable",
  synthesis_failed: "narration.reason.synthesis_failed",
  not_ready_after_restart: "narration.reason.not_ready_after_restart",
  unknown: "narration.reason.unknown",
};

/** What went wrong, for the teacher, worded from the failure's reason (with the voice's name, say). */
export function phaseDetail(room) {
  if (room.role !== "teacher") return "";
  // Real progress: the clips synthesised so far, then, while the first sentences play, those read ahead.
  if (room.phase === "preparing" && room.preparing?.total) {
    return t("phase.detail_preparing", { ready: room.preparing.ready, total: room.preparing.total });
  }
  if (room.phase === "narrating" && room.plan?.total) {
    return t("phase.detail_reading_ahead", { ready: room.plan.sentences.length, total: room.plan.total });
  }
  if (room.phase !== "error") return "";
  const reason = room.error?.reason;
  const params = room.error?.params ?? {};
  return t(NARRATION_REASONS[reason] ?? "narration.reason.unknown", { voice: isolate(params.voice ?? "") });
}
