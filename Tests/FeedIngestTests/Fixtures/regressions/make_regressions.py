#!/usr/bin/env python3
"""Writes the hostile documents of this folder; FuzzCorpusTests.regressionInputsStayFixed replays them.

Each file attacks one thing a reader of strangers' feeds must survive (most were literals in
HostileInputTests and QuirkTests). Run it from anywhere; it rewrites the files beside itself.
Crash inputs from `scripts/fuzz FeedIngestFuzzer` are copied here by hand, named crash-WHAT-IT-BROKE.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RSS_HEAD = b'<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>Hostile</title>\n'
RSS_TAIL = b'</channel></rss>\n'


def item(guid, inner=b''):
    return b'<item><guid>' + guid + b'</guid>' + inner + b'</item>\n'


def rss(*items, prolog=b''):
    head = RSS_HEAD if not prolog else b'<?xml version="1.0" encoding="UTF-8"?>\n' + prolog + RSS_HEAD.split(b'\n', 1)[1]
    return head + b''.join(items) + RSS_TAIL


def doctype(entities):
    return b'<!DOCTYPE rss [\n' + entities + b']>\n'


laughs = b''.join(
    b'<!ENTITY lol%d "%s">\n' % (level, b'&lol%d;' % (level - 1) * 10 if level else b'lol') for level in range(10))
big = b'a' * 5000
files = {
    # Entities: expansion bombs, loops, and everything external.
    'entity-billion-laughs.xml': rss(item(b'bomb', b'<title>&lol9;</title>'), item(b'after'), prolog=doctype(laughs)),
    'entity-quadratic-blowup.xml': rss(
        item(b'q', b'<title>' + b'&big;' * 5000 + b'</title>'), item(b'after'),
        prolog=doctype(b'<!ENTITY big "' + big + b'">\n')),
    'entity-recursive.xml': rss(
        item(b'loop', b'<title>&a;</title>'), prolog=doctype(b'<!ENTITY a "x&b;">\n<!ENTITY b "y&a;">\n')),
    'entity-undeclared.xml': rss(item(b'u', b'<title>&nope; &lt; &amp;amp &#x41</title>')),
    'external-entity-file-and-http.xml': rss(
        item(b'xxe', b'<title>Leak: &secret; &remote;</title>'),
        prolog=doctype(b'<!ENTITY secret SYSTEM "file:///etc/passwd">\n'
                       b'<!ENTITY remote SYSTEM "http://127.0.0.1:1/x">\n')),
    'external-dtd-and-parameter-entity.xml': b'<?xml version="1.0"?>\n'
    b'<!DOCTYPE rss SYSTEM "http://127.0.0.1:1/feed.dtd" [<!ENTITY % p SYSTEM "file:///etc/hostname"> %p;]>\n'
    + RSS_HEAD.split(b'\n', 1)[1] + item(b'x') + RSS_TAIL,
    # Nesting and size.
    'deep-nesting-5000-divs.xml': rss(
        item(b'deep', b'<description>' + b'<div>' * 5000 + b'x' + b'</div>' * 5000 + b'</description>'), item(b'next')),
    'deep-nesting-unclosed-elements.xml': RSS_HEAD + b'<item><guid>open</guid>' + b'<x>' * 3000,
    'items-inside-items.xml': rss(b'<item><guid>outer</guid>' * 500 + b'</item>' * 500),
    'html-tag-bomb-in-cdata.xml': rss(
        item(b'html', b'<description><![CDATA[' + b'<b><i><img src="x.jpg">' * 2000 + b'text]]></description>')),
    'huge-attribute-value.xml': rss(
        item(b'attr', b'<enclosure url="https://x.example/' + b'a' * 9000 + b'.jpg" type="image/jpeg"/>'), item(b'after')),
    'huge-text-field.xml': rss(item(b'text', b'<description>' + b'word ' * 4000 + b'</description>'), item(b'after')),
    'many-attributes.xml': rss(item(b'attrs', b'<media:content ' + b''.join(
        b'a%d="%d" ' % (n, n) for n in range(3000)) + b'url="https://x.example/a.jpg"/>')),
    'many-namespace-declarations.xml': b'<rss ' + b''.join(
        b'xmlns:p%d="urn:p%d" ' % (n, n) for n in range(2000)) + b'><channel>' + item(b'ns') + RSS_TAIL,
    'many-empty-atom-entries.xml': b'<feed xmlns="http://www.w3.org/2005/Atom">' + b'<entry/>' * 8000 + b'</feed>',
    # Bytes that are not what they claim.
    'truncated-utf8-at-end.xml': RSS_HEAD + b'<item><guid>cut</guid><title>caf\xc3',
    'truncated-utf8-mid-title.xml': rss(item(b'mid', b'<title>a\xe2\x80 b \xf0\x9f\x98 c \xc3</title>'), item(b'after')),
    'overlong-and-surrogate-utf8.xml': rss(item(b'bad', b'<title>\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xff</title>')),
    'nul-bytes-in-text.xml': rss(item(b'nul', b'<title>a\x00b</title><description>\x00\x00</description>'), item(b'after')),
    'nul-byte-in-tag-name.xml': rss(item(b'nul', b'<ti\x00tle>x</ti\x00tle>'), item(b'after')),
    'control-characters.xml': rss(item(b'ctl', b'<title>' + bytes(range(1, 32)) + b'\x7f</title>')),
    'invalid-character-references.xml': rss(
        item(b'refs', b'<title>&#x0; &#xD800; &#1114112; &#xFFFE; &#99999999999999999999; &#x;</title>')),
    'bom-only.xml': b'\xef\xbb\xbf',
    'utf16-bom-odd-length.xml': b'\xff\xfe' + '<rss><channel><item><guid>u</guid></item>'.encode('utf-16-le') + b'<',
    'utf16-declared-but-utf8.xml': b'<?xml version="1.0" encoding="UTF-16"?>' + RSS_HEAD.split(b'\n', 1)[1]
    + item(b'lie', b'<title>\xc3\xa9t\xc3\xa9</title>') + RSS_TAIL,
    'unknown-encoding-label.xml': b'<?xml version="1.0" encoding="x-no-such-charset"?>' + RSS_HEAD.split(b'\n', 1)[1]
    + item(b'enc', b'<title>\xe9</title>') + RSS_TAIL,
    # Unterminated constructs.
    'unterminated-cdata.xml': RSS_HEAD + b'<item><guid>c</guid><description><![CDATA[never ends <b>',
    'unterminated-comment.xml': RSS_HEAD + item(b'before') + b'<!-- never ends <item><guid>hidden</guid></item>',
    'unterminated-attribute.xml': RSS_HEAD + b'<item><guid>a</guid><enclosure url="https://x.example/a.jpg',
    'unterminated-processing-instruction.xml': RSS_HEAD + item(b'pi') + b'<?php echo 1; ',
    'unclosed-and-mismatched-items.xml':
    b'<rss><channel><item><title>A</item><item><title>B</title><guid>b</guid></item><item><title>C</title><guid>c</guid>',
    'mismatched-end-tags.xml': rss(item(b'm', b'<title>x</description></title>'), b'</item></item>', item(b'after')),
    # Not a feed, or barely one.
    'empty.xml': b'',
    'whitespace-only.xml': b'   \n\t\r\n',
    'html-page.html': b'<!DOCTYPE html><html><head><title>Not a feed</title></head><body><p>Hi</body></html>',
    'svg-document.xml': b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>',
    'rss-without-channel.xml': b'<rss version="2.0"><item><guid>orphan</guid></item></rss>',
    'garbage-after-root.xml': rss(item(b'g1')) + b'<item><guid>late</guid></item> \x00 junk &',
    # JSON Feed.
    'json-deep-nesting.json': b'{"version":"https://jsonfeed.org/version/1.1","items":[{"id":"1","x":'
    + b'[' * 5000 + b']' * 5000 + b'}]}',
    'json-deep-nesting-unclosed.json': b'{"version":"https://jsonfeed.org/version/1.1","items":[' + b'{"a":' * 5000,
    'json-truncated-string.json': b'{"version":"https://jsonfeed.org/version/1.1","items":[{"id":"1","title":"cut',
    'json-nul-and-bad-escapes.json': b'{"version":"https://jsonfeed.org/version/1.1","items":[{"id":"\x00",'
    b'"title":"\\ud800 \\u00 \\x41","image":"https://x.example/a.jpg"}]}',
    'json-huge-numbers.json': b'{"version":"https://jsonfeed.org/version/1.1","items":[{"id":1e999999,'
    b'"_feedlayout":{"span":99999999999999999999999},"attachments":[{"url":"a.jpg","size_in_bytes":-1e400}]}]}',
    'json-wrong-types.json': b'{"version":1,"items":{"id":[]},"title":{"a":null}}',
}

for name, data in files.items():
    with open(os.path.join(HERE, name), 'wb') as handle:
        handle.write(data)
print(f'wrote {len(files)} inputs')
