#ifndef STORYCIRCLE_CCBOR_SHIM_H
#define STORYCIRCLE_CCBOR_SHIM_H

/* libcbor (Debian's libcbor-dev): CBOR for WebAuthn's attestation objects and COSE keys. */
#include <cbor.h>

#endif
