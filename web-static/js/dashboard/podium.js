// The projector's end: the podium, places appearing third to first, with a fanfare for the first.

import { $, clear, announce, podium } from "../dom.js";
import { services, show, record } from "./store.js";
import { stopTimers } from "./question.js";

export function finished(message) {
  services.player.stop();
  stopTimers();
  show("finished");
  clear($("#podium")).append(podium(message.podium, {
    more: message.podiumMore,
    onPlace: (rank) => {
      record(`podium:${rank}`);
      if (rank === 1) services.sounds.play("fanfare");
    },
  }));
  announce("The quiz is over!");
}
