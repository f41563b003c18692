// Umbrella header for the system library; the module map points here.
#pragma once
#include <libxml/parser.h>
#include <libxml/HTMLparser.h>
#include <libxml/xmlerror.h>
#include <libxml/uri.h>
