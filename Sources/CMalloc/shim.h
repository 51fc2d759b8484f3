#pragma once
// glibc's heap settings (mallopt, malloc_trim): in <malloc.h>, which Swift's Glibc module leaves out.
#include <malloc.h>
