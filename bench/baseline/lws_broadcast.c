/*
 * Baseline: the smallest broadcast server on libwebsockets that keeps the same rules as StoryCircle's
 * transport (one service thread, one lws_write per WRITEABLE callback, LWS_PRE headroom, a shared
 * reference-counted message per broadcast, a queue per connection). No JSON, no rooms logic, no
 * storage, on lws 4.1's default poll() loop: the limit of this stack as StoryCircle uses it.
 *
 * Per connection: the wsi, a ring of message pointers with its head and tail beside it (8 slots to
 * start, doubled when full, so a burst is never dropped), and a reassembly buffer only while a message
 * arrives in pieces. 56 bytes a connection plus its ring, as a lean server would have, where an
 * earlier version carried a 4,096-slot queue inline (36 KiB a connection, 350 MiB for 10,000).
 *
 *   J<room>            join a room (answered with "ok")
 *   B<room>|<payload>  send <payload> to everyone in the room
 *
 * With a certificate and key (`lws-broadcast PORT CERT KEY`) it speaks TLS on the same loop, set up as
 * StoryCircle's transport sets up its own (WebSocketServer+TLS.swift): TLS 1.2 and 1.3 only, the same cipher
 * lists and groups (the BENCH_TLS_ names below are kept equal to the server's), no compression, no
 * renegotiation, the server's cipher order; so the TLS lock-step compares like with like.
 *
 * Built and run by bench/run.sh; not part of StoryCircle.
 */
#include <libwebsockets.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define RING 8
#define INBOUND 4096
#define ROOMS 65536
/* TLS 1.2's ciphers: forward secret, authenticated encryption only; TLS 1.3's suites; the key exchange groups. */
#define BENCH_TLS_CIPHERS "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:" \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:" \
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
#define BENCH_TLS13_CIPHERS "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
#define BENCH_TLS_GROUPS "X25519:P-256:P-384"

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
	case LWS_CALLBACK_OPENSSL_LOAD_EXTRA_SERVER_VERIFY_CERTS: {
		/* The vhost's SSL_CTX, as lws made it: finished as the server finishes its own. */
		SSL_CTX *ssl = user;
		if (SSL_CTX_set_min_proto_version(ssl, TLS1_2_VERSION) != 1 || SSL_CTX_set_max_proto_version(ssl, TLS1_3_VERSION) != 1 ||
		    SSL_CTX_set_cipher_list(ssl, BENCH_TLS_CIPHERS) != 1 || SSL_CTX_set_ciphersuites(ssl, BENCH_TLS13_CIPHERS) != 1 ||
		    SSL_CTX_set1_groups_list(ssl, BENCH_TLS_GROUPS) != 1)
			return -1;
		SSL_CTX_set_options(ssl, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
		break;
	}
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
		if (s->tail == s->head) break;
		struct message *m = s->ring[s->tail++ & (s->size - 1)];
		int length = (int)m->length;
		int written = lws_write(wsi, m->bytes + LWS_PRE, m->length, LWS_WRITE_TEXT);
		message_release(m);
		if (written < length) return -1;
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
	info.port = argc > 1 ? atoi(argv[1]) : 7681;
	info.protocols = protocols;
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
	info.fd_limit_per_thread = 20000;
	if (argc > 3) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = argv[2];
		info.ssl_private_key_filepath = argv[3];
		info.ssl_cipher_list = BENCH_TLS_CIPHERS;
		info.tls1_3_plus_cipher_list = BENCH_TLS13_CIPHERS;
	}
	lws_set_log_level(LLL_ERR, NULL);
	signal(SIGINT, stop);
	signal(SIGTERM, stop);
	struct lws_context *context = lws_create_context(&info);
	if (!context) return 1;
	printf("listening %d%s\n", info.port, argc > 3 ? " (tls)" : "");
	fflush(stdout);
	while (!interrupted && lws_service(context, 0) >= 0);
	lws_context_destroy(context);
	return 0;
}
