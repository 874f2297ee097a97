/* SPDX-License-Identifier: MIT */
/* leaky_service: the program whose heap dumps the `leakgate diff` tests
 * read (see leaky_service.c). */
#ifndef LEAKGATE_TESTS_LEAKY_SERVICE_H
#define LEAKGATE_TESTS_LEAKY_SERVICE_H

/* Allocate one 4 KiB session in the shared library (never freed). */
void *leaky_lib_open_session(void);

#endif
