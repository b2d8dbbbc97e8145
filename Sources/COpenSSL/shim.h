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

/* Swift cannot import function-like macros; these re-expose the ones we need. */

static inline long sc_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_min_proto_version(ctx, version); }
static inline long sc_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_max_proto_version(ctx, version); }

#endif
