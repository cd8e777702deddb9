// Decoding a struct's bytes through its catalogue layout (filled in by the tracing work).
#pragma once
