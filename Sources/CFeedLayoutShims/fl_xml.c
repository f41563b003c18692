#include "CFeedLayoutShims.h"
