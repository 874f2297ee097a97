/* SPDX-License-Identifier: MIT */
/*
 * records: one line record, as a run's journal (results/outputs.h) and
 * `leakgate run`'s channel (run/run_proto.h) write them: a one-letter
 * type and fields separated by tabs, every field escaped (backslash, tab
 * and newline as \\, \t, \n), so that no record needs a parser beyond
 * leakgate_records__split().
 */
#ifndef LEAKGATE_RECORDS_H
#define LEAKGATE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "leakgate/leakgate.h"
#include "util.h"

/* Append s escaped for one field.  Never fails (b->failed on ENOMEM). */
void leakgate_records__put_field(struct leakgate_buf *b, const char *s);

/* A record's status field: "pass", "fail", "not_judged" (anything else
 * is written and read as not judged).  Cannot fail. */
const char *leakgate_records__status_name(leakgate_status status);
leakgate_status leakgate_records__status_parse(const char *field);

/* Append s escaped to dst[*len], truncated to leave room for "\n" and the
 * NUL within cap; never allocates (for records sent while recording).
 * False when s was cut short. */
bool leakgate_records__put_field_fixed(char *dst,
                                       size_t cap,
                                       size_t *len,
                                       const char *s);

/* Split a record (no newline) into fields, unescaping in place.  Returns
 * the number of fields (at most max).  Cannot fail. */
size_t leakgate_records__split(char **fields, size_t max, char *line);

#endif
