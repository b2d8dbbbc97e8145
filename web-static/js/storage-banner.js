// The banner teachers see while the server cannot save (`{"type":"storage","ok":false,"message":…}`), and
// a short "saving works again" once it can.

let lastOk = true;
let calmTimer = null;

export function storageBanner(node, storage) {
  if (!storage.ok) {
    clearTimeout(calmTimer);
    node.className = "message error banner";
    node.textContent = storage.message || "The server cannot save right now. Children’s answers wait until it can.";
    node.hidden = false;
  } else if (!lastOk) {
    node.className = "message good banner";
    node.textContent = "Saving works again.";
    node.hidden = false;
    clearTimeout(calmTimer);
    calmTimer = setTimeout(() => { node.hidden = true; }, 6000);
  }
  lastOk = storage.ok;
}
