// Umbrella header for libxml2; the module map points here.
//
// Debian builds libxml2 with ICU, so <libxml/encoding.h> would include ICU's headers. Foundation
// on Linux carries its own ICU (_FoundationICU) whose headers declare the same C types with other
// definitions, and a Swift module that sees both (any module importing Foundation and, even
// transitively, libxml2) fails to build. LIBXML_ICU_ENABLED only adds two converter pointers at
// the end of xmlCharEncodingHandler, a struct this project reaches through pointers alone, so
// hiding them changes nothing we use. fl_xml.h does the same before its own libxml2 includes.
#pragma once
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/HTMLparser.h>
#include <libxml/xmlerror.h>
#include <libxml/uri.h>
