/* stub, replaced shortly */
#include "qemu/osdep.h"
