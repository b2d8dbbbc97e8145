// One sentence for where the room is, for teachers and dashboards.
export function describePhase(room) {
  const players = room.players.length;
  const question = room.question ? `question ${room.question.index + 1} of ${room.question.count}` : "the quiz";
  let text;
  switch (room.phase) {
    case "lobby": text = `Waiting to start · ${players} ${players === 1 ? "child has" : "children have"} joined`; break;
    case "preparing": text = "Pip is preparing the story…"; break;
    case "error": text = `The narration failed: ${room.error ?? ""} Change the voice in Settings or press Try again (or Skip to the quiz).`; break;
    case "narrating": text = "Telling the story"; break;
    case "question": text = `Children are answering ${question}`; break;
    case "reveal": text = `The answer to ${question} is shown · press Next`; break;
    case "finished": text = "The room has finished"; break;
    default: text = room.phase;
  }
  if (room.paused) text += " (paused)";
  if (room.locked) text += " · locked";
  return text;
}
