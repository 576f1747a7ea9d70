/*===- CHeaderCheck.c - ssd-c/Runtime.h compiles as C ---------------------===*\
|* Built as C so that the embedders' header stays valid C; ArtifactTest.cpp  *|
|* calls it to check that C callers see the documented error behaviour.      *|
\*===----------------------------------------------------------------------===*/

#include "ssd-c/Runtime.h"

#include <string.h>

/* Loading a directory without a manifest fails with a message naming it. */
int ssdRtCHeaderCheck(const char *missingDir) {
  SsdRtArtifact artifact = 0;
  SsdRtError error = ssdRtArtifactLoad(missingDir, &artifact);
  int ok = error != 0 && artifact == 0 &&
           strstr(ssdRtErrorGetMessage(error), "manifest.json") != 0;
  ssdRtErrorDestroy(error);
  return ok;
}
