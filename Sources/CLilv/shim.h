#pragma once
#include <lilv/lilv.h>
