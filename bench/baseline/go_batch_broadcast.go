// Peer: Go gorilla/websocket in its batching form, as a performance-minded Go server writes a broadcast:
// the payload framed once per broadcast (header and bytes, shared by every member), and a writer goroutine
// per connection that takes what its channel holds and sends it all in one buffered write on the
// connection's socket. One frame waiting: one write; forty waiting: still one. gorilla does the handshake
// and the reading; the writes bypass its writer (a server's frames are unmasked: the pre-framed bytes are
// exactly what it would send). Speaks bench/baseline/PROTOCOL.md. Run by bench/run.sh; not part of
// StoryCircle.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/gorilla/websocket"
)

// A connection's queue: deep enough for the generator's bursts; a full one makes the broadcaster wait
// rather than drop (the generator counts every message).
const queueDepth = 1024

// A text frame as a server sends it: FIN + text opcode, the length, the payload (never masked).
func frame(payload []byte) []byte {
	var header []byte
	switch n := len(payload); {
	case n < 126:
		header = []byte{0x81, byte(n)}
	case n < 65536:
		header = []byte{0x81, 126, 0, 0}
		binary.BigEndian.PutUint16(header[2:], uint16(n))
	default:
		header = make([]byte, 10)
		header[0], header[1] = 0x81, 127
		binary.BigEndian.PutUint64(header[2:], uint64(n))
	}
	return append(header, payload...)
}

type client struct {
	queue chan []byte
	done  chan struct{} // closed when the connection has ended: nobody waits on its queue then
}

func (c *client) send(framed []byte) {
	select {
	case c.queue <- framed:
	case <-c.done:
	}
}

// The writer: blocks for one frame, then drains whatever else is already queued into the same buffer,
// and flushes once.
func (c *client) write(socket net.Conn) {
	out := bufio.NewWriterSize(socket, 64*1024)
	for {
		select {
		case framed := <-c.queue:
			out.Write(framed)
		drain:
			for {
				select {
				case more := <-c.queue:
					out.Write(more)
				default:
					break drain
				}
			}
			if out.Flush() != nil {
				socket.Close() // the reader then fails and ends the connection
				return
			}
		case <-c.done:
			return
		}
	}
}

var (
	mutex sync.Mutex
	rooms = map[string]map[*client]struct{}{}
	ok    = frame([]byte("ok"))
)

var upgrader = websocket.Upgrader{
	ReadBufferSize:  4096,
	WriteBufferSize: 4096,
	CheckOrigin:     func(*http.Request) bool { return true },
}

func serve(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	conn.SetReadLimit(4096)
	c := &client{queue: make(chan []byte, queueDepth), done: make(chan struct{})}
	go c.write(conn.UnderlyingConn())
	room := ""
	defer func() {
		if room != "" {
			mutex.Lock()
			delete(rooms[room], c)
			mutex.Unlock()
		}
		close(c.done)
		conn.Close()
	}()
	for {
		_, data, err := conn.ReadMessage()
		if err != nil || len(data) < 2 {
			return
		}
		switch data[0] {
		case 'J':
			room = string(data[1:])
			mutex.Lock()
			if rooms[room] == nil {
				rooms[room] = map[*client]struct{}{}
			}
			rooms[room][c] = struct{}{}
			mutex.Unlock()
			c.send(ok)
		case 'B':
			bar := bytes.IndexByte(data, '|')
			if bar < 0 {
				continue
			}
			framed := frame(data[bar+1:])
			mutex.Lock()
			members := make([]*client, 0, len(rooms[string(data[1:bar])]))
			for member := range rooms[string(data[1:bar])] {
				members = append(members, member)
			}
			mutex.Unlock()
			for _, member := range members {
				member.send(framed)
			}
		}
	}
}

func main() {
	port := "7681"
	if len(os.Args) > 1 {
		port = os.Args[1]
	}
	listener, err := net.Listen("tcp4", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-signals; os.Exit(0) }()
	fmt.Println("listening", port)
	http.Serve(listener, http.HandlerFunc(serve))
}
