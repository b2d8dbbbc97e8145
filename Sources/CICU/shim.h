#ifndef STORYCIRCLE_CICU_SHIM_H
#define STORYCIRCLE_CICU_SHIM_H

#include <stdint.h>
/* Macros only: which version suffix Debian's ICU gives its C functions (uspoof_open is uspoof_open_72). */
#include <unicode/uvernum.h>

/*
 * The few ICU functions StoryCircle calls, declared here with plain C types instead of through ICU's own
 * headers. Swift's Foundation carries a private ICU of its own (module _FoundationICU, every function
 * renamed swift_...), and any Swift module that sees both its headers and Debian's stops at the first enum
 * the two define differently (UErrorCode). The functions are Debian's, by their versioned names; the
 * types are ICU's stable C ABI: UChar is 16 bits, UErrorCode an int, a checker or normaliser a pointer.
 */
#define SC_ICU(name) U_ICU_ENTRY_POINT_RENAME(name)

void *SC_ICU(uspoof_open)(int32_t *status);
void SC_ICU(uspoof_close)(void *checker);
int32_t SC_ICU(uspoof_getSkeleton)(const void *checker, uint32_t type, const uint16_t *id, int32_t length,
                                    uint16_t *dest, int32_t capacity, int32_t *status);
const void *SC_ICU(unorm2_getNFKCCasefoldInstance)(int32_t *status);
int32_t SC_ICU(unorm2_normalize)(const void *normalizer, const uint16_t *src, int32_t length, uint16_t *dest,
                                 int32_t capacity, int32_t *status);
const char *SC_ICU(u_errorName)(int32_t code);

/* U_ZERO_ERROR, U_BUFFER_OVERFLOW_ERROR and U_FAILURE, from unicode/utypes.h. */
static const int32_t sc_icu_ok = 0;
static inline int sc_icu_failed(int32_t status) { return status > 0; }
static inline int sc_icu_overflowed(int32_t status) { return status == 15; }

static inline void *sc_spoof_open(int32_t *status) { return SC_ICU(uspoof_open)(status); }
static inline void sc_spoof_close(void *checker) { SC_ICU(uspoof_close)(checker); }

/* TR39's skeleton of `text`; the checker is const, so this is safe from several threads at once (uspoof.h). */
static inline int32_t sc_spoof_skeleton(const void *checker, const uint16_t *text, int32_t length, uint16_t *destination,
                                        int32_t capacity, int32_t *status) {
    return SC_ICU(uspoof_getSkeleton)(checker, 0, text, length, destination, capacity, status);
}

/* The NFKC_Casefold normaliser: ICU owns it (never closed), and normalising with it is thread safe. */
static inline const void *sc_nfkc_casefold(int32_t *status) { return SC_ICU(unorm2_getNFKCCasefoldInstance)(status); }
static inline int32_t sc_normalize(const void *normalizer, const uint16_t *text, int32_t length, uint16_t *destination,
                                   int32_t capacity, int32_t *status) {
    return SC_ICU(unorm2_normalize)(normalizer, text, length, destination, capacity, status);
}

static inline const char *sc_icu_error_name(int32_t status) { return SC_ICU(u_errorName)(status); }

#endif
