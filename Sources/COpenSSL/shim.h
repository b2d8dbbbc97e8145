#ifndef STORYCIRCLE_COPENSSL_SHIM_H
#define STORYCIRCLE_COPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/err.h>
#include <openssl/ec.h>
#include <openssl/rand.h>
#include <openssl/param_build.h>
#include <openssl/core_names.h>

/* Swift cannot import function-like macros; these re-expose the ones we need. */

static inline long sc_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_min_proto_version(ctx, version); }
static inline long sc_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_max_proto_version(ctx, version); }

static inline long sc_ssl_ctx_set1_groups_list(SSL_CTX *ctx, const char *list) { return SSL_CTX_set1_groups_list(ctx, list); }
static inline long sc_ssl_ctx_clear_chain_certs(SSL_CTX *ctx) { return SSL_CTX_clear_chain_certs(ctx); }
static inline long sc_ssl_ctx_add1_chain_cert(SSL_CTX *ctx, X509 *certificate) { return SSL_CTX_add1_chain_cert(ctx, certificate); }

/** What a server wants on top of OpenSSL's defaults: no compression (CRIME), no renegotiation, its own order of ciphers, no
 * session tickets (their key would never rotate in a server that runs for weeks: resumed sessions would lose forward secrecy). */
static inline uint64_t sc_ssl_op_server_hardening(void) { return SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_TICKET; }

/** What EVP_PKEY_fromdata imports for a public key (WebAuthn's COSE keys): the key and its domain parameters. */
static inline int sc_evp_pkey_public_key_selection(void) { return EVP_PKEY_PUBLIC_KEY; }

/** SNI for a client connection. */
static inline long sc_ssl_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }

#endif
