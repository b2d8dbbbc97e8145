// The banner teachers see while the server cannot save (`{"type":"storage","ok":false,"code":…}`), and
// a short "saving works again" once it can.

import { t } from "./i18n.js";

// The words of each cause (docs/protocol.md, "Error codes"), written out so the catalog test sees them.
const STORAGE_REASONS = {
  disk_full: "storage.reason.disk_full",
  read_only: "storage.reason.read_only",
  io_error: "storage.reason.io_error",
  database_unreachable: "storage.reason.database_unreachable",
  store_closed: "storage.reason.store_closed",
  unknown: "storage.reason.unknown",
};

let lastOk = true;
let calmTimer = null;

export function storageBanner(node, storage) {
  if (!storage.ok) {
    clearTimeout(calmTimer);
    node.className = "message error banner";
    // What it means for the class, then the cause (a full disk, say), each worded from its code.
    const detail = Object.assign(document.createElement("span"), { className: "detail", textContent: t(STORAGE_REASONS[storage.reason] ?? "storage.reason.unknown") });
    detail.dataset.reason = storage.reason ?? "unknown";
    node.replaceChildren(t("storage.down"), " ", detail);
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
