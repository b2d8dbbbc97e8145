// The projector's end: the podium, places appearing third to first, with a fanfare for the first.

import { $, clear, announce, podium } from "../dom.js";
import { services, show, record } from "./store.js";
import { stopTimers } from "./question.js";
import { t } from "../i18n.js";

/** `quiet`: only the words again (the language changed): no fanfare, nothing recorded. */
export function finished(message, { quiet = false } = {}) {
  services.player.stop();
  stopTimers();
  show("finished");
  clear($("#podium")).append(podium(message.podium, {
    more: message.podiumMore,
    onPlace: (rank) => {
      if (quiet) return;
      record(`podium:${rank}`);
      if (rank === 1) services.sounds.play("fanfare");
    },
  }));
  if (!quiet) announce(t("finished.over"));
}
