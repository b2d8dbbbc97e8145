#ifndef STORYCIRCLE_CSODIUM_SHIM_H
#define STORYCIRCLE_CSODIUM_SHIM_H

#include <sodium.h>

#endif
