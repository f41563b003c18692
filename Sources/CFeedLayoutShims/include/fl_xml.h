// libxml2 glue for FeedIngest. Every symbol is prefixed `fl_xml_`.
//
// Swift cannot name libxml2's variadic error callbacks (warningSAXFunc and friends), so the
// parts of handler setup that touch them live here; everything else is done from Swift.
#pragma once
// Hide libxml2's ICU members before any libxml2 header: CLibXML2/shim.h says why.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/HTMLparser.h>
#include <libxml/entities.h>
#include <libxml/tree.h>
#include <libxml/uri.h>

/// Fills `handler` with libxml2's SAX2 defaults (they keep the internal DTD subset, so that
/// declared entities resolve), then makes it safe and quiet: the variadic warning / error
/// callbacks are cleared so that every diagnostic goes to `structured_error` (never stderr),
/// external entities and external subsets are never resolved or loaded, and no tree is built.
/// The caller then sets startElementNs, endElementNs, characters and reference.
void fl_xml_prepare_sax_handler(xmlSAXHandler *handler, xmlStructuredErrorFunc structured_error);

/// A libxml2 HTML parser context whose diagnostics are discarded (never printed), for turning
/// caption HTML into text. Free it with htmlFreeParserCtxt.
htmlParserCtxtPtr fl_xml_html_context_create(void);

/// Parses `length` bytes of UTF-8 HTML with `context` (no network, recovering, silent). The
/// implied html/body elements are kept: without them libxml2 drops spaces between top-level
/// inline elements ("<b>a</b> <i>b</i>" would read "ab").
/// Returns the document (free it with xmlFreeDoc) or NULL.
htmlDocPtr fl_xml_html_read(htmlParserCtxtPtr context, const char *bytes, int length);

/// Resolves `reference` against `base` per RFC 3986 with xmlBuildURI. Returns a string the caller
/// frees with fl_xml_free, or NULL when either cannot be parsed as a URI.
char *fl_xml_build_uri(const char *reference, const char *base);

/// Frees memory libxml2 allocated (xmlFree is a macro or a global, depending on the build).
void fl_xml_free(void *pointer);

/// The calling thread's libxml2 error handlers, saved while a reader parses.
typedef struct {
    xmlStructuredErrorFunc structured_handler;
    void *structured_context;
    xmlGenericErrorFunc generic_handler;
    void *generic_context;
} fl_xml_error_scope;

/// Routes the calling thread's libxml2 errors that carry no parser context (encoding conversion
/// failures, for one) to `handler` with `context`, saving the previous handlers in `saved`.
/// libxml2 keeps these per thread; a reader enters the scope for the duration of one synchronous
/// call, so nothing leaks to stderr and no other thread is affected.
void fl_xml_error_scope_enter(fl_xml_error_scope *saved, void *context, xmlStructuredErrorFunc handler);

/// Restores the handlers `fl_xml_error_scope_enter` saved.
void fl_xml_error_scope_leave(const fl_xml_error_scope *saved);
