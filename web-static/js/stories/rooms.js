// "Start a room" on a library story, the same on the library page and in the editor: the server makes the
// room (POST /api/rooms with the story's id) and the page shows its code with the teacher page and the
// projector screen, each opening in a tab of its own so the library or the editor stays where it was.

import { $, announce } from "../dom.js";
import { t } from "../i18n.js";
import { adminApi } from "../api.js";

/** Starts a room on the stored story `storyId` and shows it in `#room-started`; throws what `call` throws. */
export async function startRoom(storyId) {
  const room = await adminApi().call("POST", "/api/rooms", { storyId });
  const title = $("#room-started-title");
  title.textContent = t("library.room_started", { title: room.title, code: room.code });
  title.dir = "auto";
  $("#room-teacher-link").href = here(room.teacherURL);
  $("#room-projector-link").href = here(room.dashboardURL);
  $("#room-started").hidden = false;
  $("#room-teacher-link").focus();
  announce(title.textContent);
  return room;
}

/**
 * The server's link (made with the address it prints, for other devices) at this page's own origin: to the
 * browser another address is another site, and a teacher tab opened there would lose this tab's session
 * (the school's key, school-key.js) and with it the way back to the library.
 */
function here(serverURL) {
  const url = new URL(serverURL, location.href);
  return `${location.origin}${url.pathname}${url.search}${url.hash}`;
}
