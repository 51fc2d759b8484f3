#pragma once
// Counts heap calls (malloc, calloc, realloc, free, aligned allocations) made
// by the calling thread between arm and disarm: the tests' check of the
// real-time rule "no allocation in the block loop". Other threads (the test
// runner's) are never counted.
#include <stdint.h>

void carillon_allocations_arm(void);
/// Stops counting; returns the calls counted since arm.
int64_t carillon_allocations_disarm(void);
/// Of the calls the last arm…disarm counted, how many were `free`.
int64_t carillon_allocations_frees(void);
