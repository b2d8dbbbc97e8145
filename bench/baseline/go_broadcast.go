// Peer: a broadcast server on Go's gorilla/websocket (Debian's golang-github-gorilla-websocket-dev, built
// in GOPATH mode), its fastest ordinary broadcast: the payload framed once as a PreparedMessage and
// handed to a writer goroutine per connection, which writes it with WritePreparedMessage. Speaks
// bench/baseline/PROTOCOL.md. Run by bench/run.sh; not part of StoryCircle.
package main

import (
	"bytes"
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

type client struct {
	conn  *websocket.Conn
	queue chan *websocket.PreparedMessage
	done  chan struct{} // closed when the connection has ended: nobody waits on its queue then
}

func (c *client) send(message *websocket.PreparedMessage) {
	select {
	case c.queue <- message:
	case <-c.done:
	}
}

var (
	mutex sync.Mutex
	rooms = map[string]map[*client]struct{}{}
	ok, _ = websocket.NewPreparedMessage(websocket.TextMessage, []byte("ok"))
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
	c := &client{conn: conn, queue: make(chan *websocket.PreparedMessage, queueDepth), done: make(chan struct{})}
	go func() {
		for {
			select {
			case message := <-c.queue:
				if conn.WritePreparedMessage(message) != nil {
					conn.Close() // the reader then fails and ends the connection
					return
				}
			case <-c.done:
				return
			}
		}
	}()
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
			message, err := websocket.NewPreparedMessage(websocket.TextMessage, data[bar+1:])
			if err != nil {
				continue
			}
			mutex.Lock()
			members := make([]*client, 0, len(rooms[string(data[1:bar])]))
			for member := range rooms[string(data[1:bar])] {
				members = append(members, member)
			}
			mutex.Unlock()
			for _, member := range members {
				member.send(message)
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
