#ifndef STORYCIRCLE_CZIP_SHIM_H
#define STORYCIRCLE_CZIP_SHIM_H

/* libzip (Debian's libzip-dev): reading the ZIP files rostering systems export (`storycircle roster import`). */
#include <zip.h>

#endif
