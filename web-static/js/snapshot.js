// A `welcome` replaces everything a page shows: after the store has taken the snapshot, each page shows it
// through the same screen functions its messages use, in the one order below.

/**
 * Shows the room in `state` (just set from a welcome) with `screens`: `lobby(state)`, `preparing({ready,
 * total})`, `problem()`, `story(plan)`, `progress({sentence, at})`, `question(view, saved)`,
 * `reveal(reveal)`, `finished(finished)`.
 */
export function showSnapshot(state, screens) {
  switch (state.phase) {
    case "preparing": screens.preparing(state.preparing ?? { ready: 0, total: 1 }); break;
    case "error": screens.problem(); break;
    case "narrating":
      screens.story(state.plan);
      if (!state.paused) screens.progress({ sentence: state.sentence, at: state.sentenceAt });
      break;
    case "question": screens.question(state.question, state.yourAnswer); break;
    case "reveal":
      // The question as it was asked, with the child's own answer marked, then its answer.
      screens.question(state.question, state.reveal.you?.option ?? null);
      screens.reveal(state.reveal);
      break;
    case "finished": screens.finished(state.finished); break;
    default: screens.lobby(state);
  }
}
