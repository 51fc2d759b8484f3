#pragma once
#include <lilv/lilv.h>
// The host features Carillon gives a plugin (LV2Instance): URID map and unmap, options.
#include <lv2/urid/urid.h>
#include <lv2/options/options.h>
#include <lv2/atom/atom.h>
#include <lv2/worker/worker.h>
#include <lv2/state/state.h>
