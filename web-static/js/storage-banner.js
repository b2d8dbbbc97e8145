// The banner teachers see while the server cannot save (`{"type":"storage","ok":false,"code":…}`), and
// a short "saving works again" once it can.

import { t } from "./i18n.js";

let lastOk = true;
let calmTimer = null;

export function storageBanner(node, storage) {
  if (!storage.ok) {
    clearTimeout(calmTimer);
    node.className = "message error banner";
    // Our words, then the server's own about the cause (a full disk, say): a detail, shown as written.
    const detail = Object.assign(document.createElement("span"), { className: "detail", lang: "en", dir: "auto", textContent: storage.message ?? "" });
    node.replaceChildren(t("storage.down"), storage.message ? " " : "", detail);
    node.hidden = false;
  } else if (!lastOk) {
    node.className = "message good banner";
    node.textContent = t("storage.back");
    node.hidden = false;
    clearTimeout(calmTimer);
    calmTimer = setTimeout(() => { node.hidden = true; }, 6000);
  }
  lastOk = storage.ok;
}
