/* SPDX-License-Identifier: MIT */
#ifndef PARSER_TESTS_H
#define PARSER_TESTS_H

void add_parser_tests(void);

#endif
