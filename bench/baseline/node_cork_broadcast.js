// Peer: Node.js `ws` in its batching form: every socket a broadcast writes to is corked on its first
// frame in a turn of the event loop and uncorked once, after that turn's I/O (setImmediate), so the
// frames one turn queues for one connection leave in one writev. The payload Buffer as received, sent with
// ws.send as a text frame, no compression, as in node_broadcast.js. Speaks bench/baseline/PROTOCOL.md.
// Run by bench/run.sh; not part of StoryCircle.
'use strict';
const { WebSocketServer } = require('ws');

const port = Number(process.argv[2] || 7681);
const rooms = new Map();
const server = new WebSocketServer({ host: '127.0.0.1', port, backlog: 4096, perMessageDeflate: false, clientTracking: false, maxPayload: 4096 });

// The net.Socket under each ws connection corked in this turn, uncorked together once the turn's I/O is done.
const corked = new Set();
function uncorkAll() {
  for (const socket of corked) socket.uncork();
  corked.clear();
}
function sendCorked(member, payload) {
  const socket = member._socket; // ws exposes no cork of its own; its socket is the net.Socket
  if (socket && !corked.has(socket)) {
    if (corked.size === 0) setImmediate(uncorkAll);
    socket.cork();
    corked.add(socket);
  }
  member.send(payload, { binary: false });
}

server.on('connection', (socket) => {
  let room = null;
  socket.on('message', (data) => {
    if (data[0] === 0x4a /* J */) {
      room = data.toString('latin1', 1);
      if (!rooms.has(room)) rooms.set(room, new Set());
      rooms.get(room).add(socket);
      socket.send('ok');
    } else if (data[0] === 0x42 /* B */) {
      const bar = data.indexOf(0x7c /* | */);
      if (bar < 0) return;
      const members = rooms.get(data.toString('latin1', 1, bar));
      if (!members) return;
      const payload = data.subarray(bar + 1);
      for (const member of members) sendCorked(member, payload);
    }
  });
  socket.on('error', () => {}); // the generator drops thousands of connections at the end
  socket.on('close', () => { if (room !== null) rooms.get(room).delete(socket); });
});
server.on('listening', () => console.log(`listening ${port}`));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
