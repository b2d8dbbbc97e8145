// Peer: a broadcast server on Node.js `ws` (Debian's node-ws), its fastest ordinary broadcast: the
// payload Buffer as received (never decoded to a string), sent to every member with ws.send as a text
// frame, no compression. Speaks bench/baseline/PROTOCOL.md. Run by bench/run.sh; not part of StoryCircle.
'use strict';
const { WebSocketServer } = require('ws');

const port = Number(process.argv[2] || 7681);
const rooms = new Map();
const server = new WebSocketServer({ host: '127.0.0.1', port, backlog: 4096, perMessageDeflate: false, clientTracking: false, maxPayload: 4096 });

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
      for (const member of members) member.send(payload, { binary: false });
    }
  });
  socket.on('error', () => {}); // the generator drops thousands of connections at the end
  socket.on('close', () => { if (room !== null) rooms.get(room).delete(socket); });
});
server.on('listening', () => console.log(`listening ${port}`));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
