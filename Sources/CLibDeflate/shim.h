// Umbrella header for the system library; the module map points here.
#pragma once
#include <libdeflate.h>
