#include "clv2log.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    LV2_Log_Log log;
    char name[128];
    LV2_URID trace, error, warning;
} CarillonLog;

static int carillon_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *format, va_list args) {
    const CarillonLog *self = (const CarillonLog *)handle;
    if (type == self->trace) return 0;
    char line[1024];
    const char *kind = type == self->error ? "error: " : type == self->warning ? "warning: " : "";
    int head = snprintf(line, sizeof line, "carillon: %s: %s", self->name, kind);
    if (head < 0) return head;
    if ((size_t)head >= sizeof line) head = (int)sizeof line - 1;
    int body = vsnprintf(line + head, sizeof line - (size_t)head, format, args);
    if (body < 0) return body;
    size_t length = strnlen(line, sizeof line - 1);
    // One line each: the plugin's own trailing newline is not doubled.
    while (length > 0 && line[length - 1] == '\n') length--;
    line[length++] = '\n';
    ssize_t written = write(STDERR_FILENO, line, length);
    (void)written;
    return body;
}

static int carillon_printf(LV2_Log_Handle handle, LV2_URID type, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = carillon_vprintf(handle, type, format, args);
    va_end(args);
    return n;
}

LV2_Log_Log *carillon_lv2_log_new(const char *name, LV2_URID trace, LV2_URID error, LV2_URID warning) {
    CarillonLog *self = calloc(1, sizeof *self);
    if (!self) return NULL;
    snprintf(self->name, sizeof self->name, "%s", name);
    self->trace = trace; self->error = error; self->warning = warning;
    self->log.handle = self;
    self->log.printf = carillon_printf;
    self->log.vprintf = carillon_vprintf;
    return &self->log;
}

void carillon_lv2_log_free(LV2_Log_Log *log) {
    free(log ? log->handle : NULL);
}

int carillon_lv2_log_test(LV2_Log_Log *log, LV2_URID type, int value, const char *text) {
    return log->printf(log->handle, type, "value %d, %s\n", value, text);
}
