// One sentence for where the room is, for teachers and dashboards. A failure's reason reaches teachers
// only; the server sends the projector a kind sentence instead.
export function describePhase(room) {
  const players = room.players.length;
  const question = room.question ? `question ${room.question.index + 1} of ${room.question.count}` : "the quiz";
  let text;
  switch (room.phase) {
    case "lobby": text = `Waiting to start · ${players} ${players === 1 ? "child has" : "children have"} joined`; break;
    case "preparing": text = "Pip is preparing the story…"; break;
    case "error": text = room.role === "teacher" ? `The narration failed. ${room.error ?? ""}` : (room.error ?? "Pip could not get the story ready."); break;
    case "narrating": text = "Telling the story"; break;
    case "question": text = `Children are answering ${question}`; break;
    case "reveal": text = `The answer to ${question} is shown`; break;
    case "finished": text = "The room has finished"; break;
    default: text = room.phase;
  }
  if (room.paused) text += " (paused)";
  if (room.locked) text += " · locked";
  return text;
}
