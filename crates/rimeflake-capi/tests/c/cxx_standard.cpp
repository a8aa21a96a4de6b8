// Includes rimeflake.hpp and nothing else. build.sh compiles it as C++14, where the header must
// stop at its one #error saying it needs C++17, and as C++17, where it must compile cleanly.
#include "rimeflake.hpp"

int main() { return 0; }
