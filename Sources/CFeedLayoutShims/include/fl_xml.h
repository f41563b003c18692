// libxml2 glue for FeedIngest.
#pragma once
#include <libxml/parser.h>
