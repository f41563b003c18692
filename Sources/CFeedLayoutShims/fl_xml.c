// libxml2 glue for FeedIngest.
#include "fl_xml.h"

#include <string.h>

/// Refuses every external entity and DTD: the answer to XXE is never to open anything.
static xmlParserInputPtr fl_xml_refuse_entity(void *context, const xmlChar *public_id,
                                              const xmlChar *system_id) {
    (void)context;
    (void)public_id;
    (void)system_id;
    return NULL;
}

/// Ignores an external subset declaration instead of loading it.
static void fl_xml_ignore_external_subset(void *context, const xmlChar *name,
                                          const xmlChar *external_id, const xmlChar *system_id) {
    (void)context;
    (void)name;
    (void)external_id;
    (void)system_id;
}

/// Swallows a diagnostic: caption HTML is tag soup by nature and its complaints are noise.
static void fl_xml_discard_error(void *context, xmlErrorPtr error) {
    (void)context;
    (void)error;
}

void fl_xml_prepare_sax_handler(xmlSAXHandler *handler, xmlStructuredErrorFunc structured_error) {
    memset(handler, 0, sizeof(*handler));
    xmlSAXVersion(handler, 2);
    handler->warning = NULL;
    handler->error = NULL;
    handler->fatalError = NULL;
    handler->serror = structured_error;
    handler->resolveEntity = fl_xml_refuse_entity;
    handler->externalSubset = fl_xml_ignore_external_subset;
    // No tree: the Swift side receives elements and text directly.
    handler->startElement = NULL;
    handler->endElement = NULL;
    handler->startElementNs = NULL;
    handler->endElementNs = NULL;
    handler->characters = NULL;
    handler->cdataBlock = NULL;
    handler->ignorableWhitespace = NULL;
    handler->comment = NULL;
    handler->processingInstruction = NULL;
    handler->reference = NULL;
    handler->initialized = XML_SAX2_MAGIC;
}

htmlParserCtxtPtr fl_xml_html_context_create(void) {
    // Idempotent and locked inside libxml2; its tables must exist before threads share them.
    xmlInitParser();
    htmlParserCtxtPtr context = htmlNewParserCtxt();
    if (context == NULL || context->sax == NULL) {
        return context;
    }
    context->sax->warning = NULL;
    context->sax->error = NULL;
    context->sax->fatalError = NULL;
    context->sax->serror = fl_xml_discard_error;
    context->sax->initialized = XML_SAX2_MAGIC;
    return context;
}

htmlDocPtr fl_xml_html_read(htmlParserCtxtPtr context, const char *bytes, int length) {
    if (context == NULL) {
        return NULL;
    }
    // The sax block survives htmlCtxtReset, but options may touch it: set it again each time.
    context->sax->warning = NULL;
    context->sax->error = NULL;
    context->sax->fatalError = NULL;
    context->sax->serror = fl_xml_discard_error;
    return htmlCtxtReadMemory(context, bytes, length, NULL, "UTF-8",
                              HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                  HTML_PARSE_RECOVER | HTML_PARSE_COMPACT);
}

char *fl_xml_build_uri(const char *reference, const char *base) {
    return (char *)xmlBuildURI((const xmlChar *)reference, (const xmlChar *)base);
}

void fl_xml_free(void *pointer) {
    xmlFree(pointer);
}

/// Swallows libxml2's unstructured messages ("xmlParseChunk: encoder error"): the structured
/// handler has already reported the same problem with more detail.
static void fl_xml_silent_generic_error(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

void fl_xml_error_scope_enter(fl_xml_error_scope *saved, void *context, xmlStructuredErrorFunc handler) {
    saved->structured_handler = xmlStructuredError;
    saved->structured_context = xmlStructuredErrorContext;
    saved->generic_handler = xmlGenericError;
    saved->generic_context = xmlGenericErrorContext;
    xmlSetStructuredErrorFunc(context, handler);
    xmlSetGenericErrorFunc(NULL, fl_xml_silent_generic_error);
}

void fl_xml_error_scope_leave(const fl_xml_error_scope *saved) {
    xmlSetStructuredErrorFunc(saved->structured_context, saved->structured_handler);
    xmlSetGenericErrorFunc(saved->generic_context, saved->generic_handler);
}
