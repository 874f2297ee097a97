/* SPDX-License-Identifier: MIT */
/*
 * corpus_empty: a library that allocates nothing, dlopen'd by runtime_once
 * to show what the C runtime itself keeps from a process's first dlopen
 * (the object table of _dl_find_object, glibc 2.35 and later): the only
 * growth a dlopen and dlclose of it leave.
 */
int corpus_empty_value;
