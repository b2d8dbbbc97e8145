/*
 * Baseline, batching form: the broadcast of lws_broadcast.c on the loop StoryCircle's transport uses
 * (libev with epoll, a foreign loop given to lws with LWS_SERVER_OPTION_LIBEV, Debian's
 * libwebsockets-evlib-ev plugin), and with every WRITEABLE callback sending all the frames its connection
 * has waiting (up to 64 KiB), framed into one buffer and written with one lws_write of raw bytes
 * (LWS_WRITE_HTTP is LWS_WRITE_RAW), as StoryCircle coalesces. One frame waiting: one write of one frame.
 *
 *   J<room>            join a room (answered with "ok")
 *   B<room>|<payload>  send <payload> to everyone in the room
 *
 * Built and run by bench/run.sh; not part of StoryCircle.
 */
#include <ev.h>
#include <libwebsockets.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define RING 8
#define INBOUND 4096
#define ROOMS 65536
#define BATCH (64 * 1024)

struct message { int references; size_t length; unsigned char bytes[]; };

struct session {
	struct lws *wsi;
	unsigned head, tail, size;	/* the ring: head - tail messages wait, size is a power of two */
	struct message **ring;
	int room, slot;
	char *inbound;		/* a message being reassembled: lws may hand it over in pieces */
	size_t received;
};

struct room { struct session **members; int count, capacity; };

static struct room rooms[ROOMS];
static volatile int interrupted;

static struct message *message_new(const char *text, size_t length, int references)
{
	struct message *m = malloc(sizeof(*m) + LWS_PRE + length);
	m->references = references;
	m->length = length;
	memcpy(m->bytes + LWS_PRE, text, length);
	return m;
}

static void message_release(struct message *m)
{
	if (--m->references == 0)
		free(m);
}

/* The room number at text[1...]; lws's receive buffer is not NUL-terminated, so parse within `len`. */
static int room_number(const char *text, size_t len)
{
	int room = 0;
	for (size_t i = 1; i < len && text[i] >= '0' && text[i] <= '9'; i++)
		room = room * 10 + (text[i] - '0');
	return room % ROOMS;
}

static void enqueue(struct session *s, struct message *m)
{
	if (s->head - s->tail == s->size) {
		unsigned size = s->size ? s->size * 2 : RING;
		struct message **ring = malloc(sizeof(*ring) * size);
		unsigned n = 0;
		for (unsigned i = s->tail; i != s->head; i++) ring[n++] = s->ring[i & (s->size - 1)];
		free(s->ring);
		s->ring = ring; s->size = size; s->tail = 0; s->head = n;
	}
	s->ring[s->head++ & (s->size - 1)] = m;
	lws_callback_on_writable(s->wsi);
}

static void leave(struct session *s)
{
	if (s->room < 0) return;
	struct room *r = &rooms[s->room];
	struct session *last = r->members[--r->count];
	r->members[s->slot] = last;
	last->slot = s->slot;
	s->room = -1;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct session *s = user;
	const char *text = in;

	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED:
		memset(s, 0, sizeof *s);
		s->wsi = wsi; s->room = -1;
		break;
	case LWS_CALLBACK_CLOSED:
		leave(s);
		while (s->tail != s->head) message_release(s->ring[s->tail++ & (s->size - 1)]);
		free(s->ring);
		free(s->inbound);
		break;
	case LWS_CALLBACK_RECEIVE:
		if (s->received || !lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi)) {
			/* In pieces: gather them (the common whole message is used in place). */
			if (s->received + len > INBOUND) return -1;
			if (!s->inbound) s->inbound = malloc(INBOUND);
			memcpy(s->inbound + s->received, in, len);
			s->received += len;
			if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi)) break;
			text = s->inbound;
			len = s->received;
			s->received = 0;
		}
		if (len > 1 && text[0] == 'J') {
			int id = room_number(text, len);
			struct room *r = &rooms[id];
			leave(s);
			if (r->count == r->capacity) {
				r->capacity = r->capacity ? r->capacity * 2 : 64;
				r->members = realloc(r->members, sizeof(*r->members) * r->capacity);
			}
			s->room = id; s->slot = r->count;
			r->members[r->count++] = s;
			enqueue(s, message_new("ok", 2, 1));
		} else if (len > 1 && text[0] == 'B') {
			const char *bar = memchr(text, '|', len);
			if (!bar) break;
			struct room *r = &rooms[room_number(text, len)];
			if (!r->count) break;
			struct message *m = message_new(bar + 1, len - (size_t)(bar + 1 - text), r->count);
			for (int i = 0; i < r->count; i++) enqueue(r->members[i], m);
		}
		break;
	case LWS_CALLBACK_SERVER_WRITEABLE: {
		/* Frames: FIN + text, the length, the payload (a server's are never masked), one after another. */
		static unsigned char batch[LWS_PRE + BATCH];
		size_t used = 0;
		while (s->tail != s->head) {
			struct message *m = s->ring[s->tail & (s->size - 1)];
			size_t header = m->length < 126 ? 2 : m->length < 65536 ? 4 : 10;
			if (used && used + header + m->length > BATCH) break;
			if (header + m->length > BATCH) {
				/* Larger than the batch buffer: alone, framed by lws. */
				s->tail++;
				int written = lws_write(wsi, m->bytes + LWS_PRE, m->length, LWS_WRITE_TEXT);
				int length = (int)m->length;
				message_release(m);
				if (written < length) return -1;
				break;
			}
			unsigned char *out = batch + LWS_PRE + used;
			out[0] = 0x81;
			if (header == 2) out[1] = (unsigned char)m->length;
			else if (header == 4) { out[1] = 126; out[2] = (unsigned char)(m->length >> 8); out[3] = (unsigned char)m->length; }
			else { out[1] = 127; for (int i = 0; i < 8; i++) out[2 + i] = (unsigned char)((uint64_t)m->length >> (56 - 8 * i)); }
			memcpy(out + header, m->bytes + LWS_PRE, m->length);
			used += header + m->length;
			s->tail++;
			message_release(m);
		}
		if (used && lws_write(wsi, batch + LWS_PRE, used, LWS_WRITE_HTTP) < (int)used) return -1;
		if (s->tail != s->head) lws_callback_on_writable(wsi);
		break;
	}
	default:
		break;
	}
	return 0;
}

static struct lws_protocols protocols[] = {
	{ "broadcast", callback, sizeof(struct session), 4096, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void stop(int signal) { (void)signal; interrupted = 1; }

int main(int argc, char **argv)
{
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof info);
	/* epoll by name, as StoryCircle's EventLoop asks; lws runs on this loop, turned one step at a time. */
	struct ev_loop *loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOSIGMASK);
	void *loops[] = { loop, NULL };
	if (!loop) return 1;
	info.port = argc > 1 ? atoi(argv[1]) : 7681;
	info.protocols = protocols;
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6 | LWS_SERVER_OPTION_LIBEV;
	info.foreign_loops = loops;
	info.fd_limit_per_thread = 20000;
	lws_set_log_level(LLL_ERR, NULL);
	signal(SIGINT, stop);
	signal(SIGTERM, stop);
	struct lws_context *context = lws_create_context(&info);
	if (!context) return 1;
	printf("listening %d\n", info.port);
	fflush(stdout);
	while (!interrupted) ev_run(loop, EVRUN_ONCE);
	lws_context_destroy(context);
	ev_loop_destroy(loop);
	return 0;
}
