// Umbrella header for the system library; the module map points here.
#pragma once
#include <stdio.h>
#include <stddef.h>
#include <jpeglib.h>
#include <jerror.h>
