//===- Passes.cpp - C API for the project's passes ------------------------===//
#include "ssd-c/Passes.h"

#include "ssd/InitAllPasses.h"

void ssdRegisterAllPasses(void) { ssd::registerAllPasses(); }
