/* a4w4_quote.h — input text quoted inside one-line error messages.
 *
 * Every error message of the libraries is one line (the CLI prints it as it is). Text taken
 * from an input — a CSV field of AITER's tables or a case file, a plugin's declared contract or
 * init message — may hold line breaks or other control bytes; a4w4_quote shows each of them as
 * '?' so the message stays one line and still names what it quotes. Used by ref/'s CSV readers
 * and by harness/ (case files, the plugin backend); reports/ keeps its own copy of the rule
 * (quote_text in reports/report_common.c: reports/ includes only its own headers). */
#ifndef A4W4_QUOTE_H
#define A4W4_QUOTE_H

#include <stddef.h>

/* Copy s into buf[len] byte for byte, every control byte (0x01..0x1F, 0x7F) shown as '?', and
 * NUL-terminate. When s needs more than len - 1 bytes it is cut and ends with "..." (when
 * len >= 4). s NULL is shown as "(null)"; len 0 writes nothing. The mapping is one byte to
 * one byte, so a caller's "%.40s" keeps its cut. Returns buf. */
const char *a4w4_quote(const char *s, char *buf, size_t len);

/* Copy s into buf[len] with every byte outside printable ASCII (0x20..0x7E) shown as \xNN
 * (a zero-width space as \xe2\x80\x8b, a UTF-8 byte-order mark as \xef\xbb\xbf), for text
 * whose grammar is ASCII (a contract, contracts §4): a refusal then shows what a terminal
 * would hide. Cut like a4w4_quote (whole escapes only, then "..." when len >= 4); s NULL is
 * "(null)"; len 0 writes nothing. Returns buf. */
const char *a4w4_quote_ascii(const char *s, char *buf, size_t len);

#endif
