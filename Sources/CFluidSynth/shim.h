#pragma once
#include <fluidsynth.h>
