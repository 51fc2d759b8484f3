#pragma once
// The LV2 log feature (log:log) a plugin is given: its printf and vprintf are
// variadic C functions, which Swift cannot define, so they live here.
#include <lv2/log/log.h>
#include <lv2/urid/urid.h>

/// A plugin's logger: messages go to standard error as one line each,
/// "carillon: NAME: text" (trace messages dropped), formatted on the stack and
/// written with one write(2): no allocation and no lock, so a plugin may log
/// from its run() on the render thread.
LV2_Log_Log *carillon_lv2_log_new(const char *name, LV2_URID trace, LV2_URID error, LV2_URID warning);
void carillon_lv2_log_free(LV2_Log_Log *log);

/// Formats as a plugin would (through the log's own printf), for tests.
int carillon_lv2_log_test(LV2_Log_Log *log, LV2_URID type, int value, const char *text);
