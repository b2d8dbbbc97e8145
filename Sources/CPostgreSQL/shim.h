#ifndef STORYCIRCLE_CPOSTGRESQL_SHIM_H
#define STORYCIRCLE_CPOSTGRESQL_SHIM_H

#include <libpq-fe.h>

/*
 * The PG_DIAG_* field codes are character-literal macros, which Swift does not import.
 */
static inline const char *sc_pq_sqlstate(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SQLSTATE);
}

static inline const char *sc_pq_primary_message(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
}

/* ERROR, FATAL, PANIC... never translated. */
static inline const char *sc_pq_severity(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SEVERITY_NONLOCALIZED);
}

/*
 * libpq prints server notices ("relation already exists, skipping") to stderr by default; the store
 * has nothing to say about them, and the server's log keeps them anyway.
 */
static void sc_pq_discard_notice(void *argument, const char *message) {
    (void)argument;
    (void)message;
}

static inline void sc_pq_silence_notices(PGconn *connection) {
    PQsetNoticeProcessor(connection, sc_pq_discard_notice, NULL);
}

#endif
