// SPDX-License-Identifier: MIT
// A C++ helper linked into the C corpus: its `new` must be seen.
#include <string>

#include "corpus.h"

static std::string *volatile kept;

extern "C" void
corpus_cxx_leak(void)
{
    kept = new std::string(100, 'x'); // MARK:cxx
}
