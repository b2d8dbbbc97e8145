#ifndef STORYCIRCLE_CSQLITE_SHIM_H
#define STORYCIRCLE_CSQLITE_SHIM_H

#include <sqlite3.h>

/*
 * SQLITE_TRANSIENT is a macro that casts -1 to a function pointer, which Swift cannot import.
 * Binding with it makes SQLite copy the bytes before sqlite3_bind_* returns.
 */
static inline sqlite3_destructor_type sc_sqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
