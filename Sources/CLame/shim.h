#ifndef STORYCIRCLE_CLAME_SHIM_H
#define STORYCIRCLE_CLAME_SHIM_H

#include <stdio.h>
#include <lame/lame.h>

#endif
